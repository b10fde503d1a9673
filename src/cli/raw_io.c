/* Raw sample streams: see raw_io.h. */
#include "cli.h"
