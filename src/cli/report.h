/*
 * What a run of IN -> OUT says when it is over (report.c): the --verify
 * report, the summary lines, and the --json-summary object. Each reads the
 * run's state (filter_run.h) and changes nothing in it.
 */
#ifndef GF_REPORT_H
#define GF_REPORT_H

#include "filter_run.h"

/*
 * --verify, after the stream: both engines' times and every difference on
 * stderr (the FFT method: the largest error against the exact sums, and
 * its bound). GF_EXIT_OK, or GF_EXIT_VERIFY after one line saying what was
 * written (a file is not committed; a stream has its frames already).
 */
int gf_report_verify(const gf_run *r);

/* After a commit: "IN -> OUT: frames x channels, taps, mode, precision,
 * method, backend (why), seconds" and the output format, on stderr. */
void gf_report_summary(const gf_run *r);
/* "levels: ..." (what gf_taps_shape folded into t), on stderr. */
void gf_report_levels(const gf_cli_options *o, const gf_taps *t);

/* --json-summary: what the run did, whatever its outcome rc. Returns rc,
 * or when rc is 0 the writer's exit code. */
int gf_report_json(const gf_run *r, int rc);

#endif /* GF_REPORT_H */
