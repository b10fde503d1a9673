/*
 * One-line messages on stderr. Names and strings in them come from the
 * command line, file names and the files themselves: every message is
 * escaped for the terminal as a whole before it is printed.
 */
#include "cli.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The code point of the UTF-8 sequence at s (its length in *len), or -1
 * for a byte that does not start a valid, shortest-form sequence. */
static long utf8_decode(const unsigned char *s, size_t *len)
{
    const unsigned c = s[0];
    if (c < 0x80) {
        *len = 1;
        return (long)c;
    }
    const size_t n = c >= 0xC2 && c <= 0xDF   ? 2
                     : c >= 0xE0 && c <= 0xEF ? 3
                     : c >= 0xF0 && c <= 0xF4 ? 4
                                              : 0;
    if (n == 0)
        return -1;
    long cp = (long)(c & (0x7F >> n));
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return -1;
        cp = cp << 6 | (long)(s[i] & 0x3F);
    }
    static const long least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return -1;
    *len = n;
    return cp;
}

/* Code points a terminal acts on rather than shows: C0 and C1 controls,
 * DEL, and the marks and overrides that reorder text around them. */
static int acts_on_terminal(long cp)
{
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E ||
           cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t gf_cli_escape(char *dst, size_t n, const char *src)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t out = 0;
    while (*s) {
        char esc[12];
        size_t len = 1;
        const long cp = utf8_decode(s, &len);
        const char *piece = (const char *)s;
        size_t plen = len;
        if (cp < 0) {
            snprintf(esc, sizeof esc, "\\x%02x", *s);
            piece = esc;
            plen = 4;
        } else if (acts_on_terminal(cp)) {
            plen = (size_t)snprintf(esc, sizeof esc, cp < 0x80 ? "\\x%02lx" : "\\u%04lx", cp);
            piece = esc;
        }
        for (size_t i = 0; i < plen; i++, out++)
            if (out + 1 < n)
                dst[out] = piece[i];
        s += len;
    }
    if (n > 0)
        dst[out < n ? out : n - 1] = '\0';
    return out;
}

/* prefix + the message, escaped, + newline on stderr. */
/* Warnings and errors kept for --json-summary (gf_cli_keep_messages). */
enum { KEEP_MAX = 64 };
static int keep;
static char *kept[2][KEEP_MAX];
static size_t nkept[2];

void gf_cli_keep_messages(void)
{
    keep = 1;
}

const char *gf_cli_kept_message(int errors, size_t i)
{
    errors = errors != 0;
    return i < nkept[errors] ? kept[errors][i] : NULL;
}

/* Lines go out whole (one fputs under the lock): a batch's workers print
 * while others do; the kept messages share the lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* This thread's capture (gf_cli_capture), or NULL: print. */
static _Thread_local gf_cli_lines *capture;

static void keep_message(int errors, const char *esc)
{
    pthread_mutex_lock(&lock);
    if (keep && nkept[errors] < KEEP_MAX && (kept[errors][nkept[errors]] = strdup(esc)) != NULL)
        nkept[errors]++;
    pthread_mutex_unlock(&lock);
}

void gf_cli_capture(gf_cli_lines *l)
{
    capture = l;
}

void gf_cli_print_lines(gf_cli_lines *l)
{
    if (l->len) {
        pthread_mutex_lock(&lock);
        fwrite(l->text, 1, l->len, stderr);
        fflush(stderr);
        pthread_mutex_unlock(&lock);
    }
    free(l->text);
    memset(l, 0, sizeof *l);
}

/* Text (whole lines): into this thread's capture, or on stderr in one
 * piece (also when the capture cannot grow: the text is not lost). */
static void put_text(const char *text, size_t n)
{
    gf_cli_lines *l = capture;
    if (l) {
        const size_t need = l->len + n + 1;
        if (need > l->cap) {
            const size_t cap = need > 2 * l->cap ? need : 2 * l->cap;
            char *t = realloc(l->text, cap);
            if (t) {
                l->text = t;
                l->cap = cap;
            }
        }
        if (need <= l->cap) {
            memcpy(l->text + l->len, text, n);
            l->len += n;
            l->text[l->len] = '\0';
            return;
        }
    }
    pthread_mutex_lock(&lock);
    fwrite(text, 1, n, stderr);
    pthread_mutex_unlock(&lock);
}

void gf_cli_print(const char *fmt, ...)
{
    char small[1024], *text = small;
    va_list ap;
    va_start(ap, fmt);
    const int len = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (len < 0)
        return;
    if (len >= (int)sizeof small && (text = malloc((size_t)len + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(text, (size_t)len + 1, fmt, ap);
        va_end(ap);
    }
    if (!text)
        text = small; /* out of memory: the text cut short */
    put_text(text, strlen(text));
    if (text != small)
        free(text);
}

typedef enum kind { SAY, WARNING, ERROR } kind;

static void say(kind k, const char *fmt, va_list ap)
{
    static const char *const prefix[] = {"gpufilt: ", "gpufilt: warning: ", "gpufilt: error: "};
    char small[1024], esmall[1024];
    va_list aq;
    va_copy(aq, ap);
    const int len = vsnprintf(small, sizeof small, fmt, aq);
    va_end(aq);
    char *msg = small, *esc = esmall;
    if (len >= (int)sizeof small && (msg = malloc((size_t)len + 1)) != NULL)
        vsnprintf(msg, (size_t)len + 1, fmt, ap);
    if (!msg)
        msg = small; /* out of memory: the message cut short */
    const size_t elen = gf_cli_escape(NULL, 0, msg);
    if (elen >= sizeof esmall && !(esc = malloc(elen + 1)))
        esc = esmall;
    gf_cli_escape(esc, esc == esmall ? sizeof esmall : elen + 1, msg);
    const size_t plen = strlen(prefix[k]);
    const size_t n = strlen(esc); /* elen, or less when esc was cut short */
    char line[1200], *whole = plen + n + 2 <= sizeof line ? line : malloc(plen + n + 2);
    if (whole) {
        memcpy(whole, prefix[k], plen);
        memcpy(whole + plen, esc, n);
        whole[plen + n] = '\n';
        put_text(whole, plen + n + 1);
        if (whole != line)
            free(whole);
    } else {
        put_text(prefix[k], plen); /* out of memory: in pieces */
        put_text(esc, n);
        put_text("\n", 1);
    }
    if (k != SAY)
        keep_message(k == ERROR, esc);
    if (msg != small)
        free(msg);
    if (esc != esmall)
        free(esc);
}

void gf_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(ERROR, fmt, ap);
    va_end(ap);
}

void gf_cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(WARNING, fmt, ap);
    va_end(ap);
}

void gf_cli_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(SAY, fmt, ap);
    va_end(ap);
}
