/*
 * Text as JavaScript sees it: strict UTF-8, String.prototype.trim's whitespace, canonical
 * base64, Date.parse and Date#toISOString, and string order by UTF-16 code units.
 */
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200112L
#undef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200112L
#endif

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"

int licvi_utf8_valid(const uint8_t *s, size_t length) {
  size_t i = 0;
  while (i < length) {
    uint8_t c = s[i];
    size_t need;
    uint32_t cp, min;
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
      cp = c & 0x1F;
      min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      cp = c & 0x0F;
      min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      cp = c & 0x07;
      min = 0x10000;
    } else {
      return 0;
    }
    if (length - i <= need) return 0;
    {
      size_t k;
      for (k = 1; k <= need; k++) {
        if ((s[i + k] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i + k] & 0x3F);
      }
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    i += need + 1;
  }
  return 1;
}

size_t licvi_whitespace_at(const uint8_t *s, size_t n) {
  if (n == 0) return 0;
  if (s[0] == 0x09 || s[0] == 0x0A || s[0] == 0x0B || s[0] == 0x0C || s[0] == 0x0D ||
      s[0] == 0x20)
    return 1;
  if (n >= 2 && s[0] == 0xC2 && s[1] == 0xA0) return 2; /* U+00A0 */
  if (n < 3) return 0;
  if (s[0] == 0xE1 && s[1] == 0x9A && s[2] == 0x80) return 3; /* U+1680 */
  if (s[0] == 0xE2 && s[1] == 0x80) {
    if (s[2] >= 0x80 && s[2] <= 0x8A) return 3;                 /* U+2000 to U+200A */
    if (s[2] == 0xA8 || s[2] == 0xA9 || s[2] == 0xAF) return 3; /* U+2028, U+2029, U+202F */
  }
  if (s[0] == 0xE2 && s[1] == 0x81 && s[2] == 0x9F) return 3; /* U+205F */
  if (s[0] == 0xE3 && s[1] == 0x80 && s[2] == 0x80) return 3; /* U+3000 */
  if (s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) return 3; /* U+FEFF */
  return 0;
}

void licvi_trim(const uint8_t *s, size_t length, size_t *start, size_t *end) {
  size_t a = 0, b = length;
  for (;;) {
    size_t w = licvi_whitespace_at(s + a, b - a);
    if (w == 0) break;
    a += w;
  }
  while (b > a) {
    size_t w = 0, k;
    /* A whitespace character ends here when one starts 1, 2 or 3 bytes back and ends at b. */
    for (k = 1; k <= 3 && k <= b - a; k++) {
      if (licvi_whitespace_at(s + b - k, k) == k) {
        w = k;
        break;
      }
    }
    if (w == 0) break;
    b -= w;
  }
  *start = a;
  *end = b;
}

/* ---- base64 -------------------------------------------------------------------------------- */

static int sextet(uint8_t c, int url) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (url) {
    if (c == '-') return 62;
    if (c == '_') return 63;
  } else {
    if (c == '+') return 62;
    if (c == '/') return 63;
  }
  return -1;
}

/* Decodes unpadded characters; NULL when one is outside the alphabet or a padding bit is set. */
static uint8_t *decode(licvi_arena *arena, const char *text, size_t length, int url,
                       size_t *out_length) {
  uint8_t *out;
  size_t i, o = 0;
  uint32_t value = 0;
  int bits = 0;
  if (length % 4 == 1) return NULL;
  out = licvi_alloc(arena, length / 4 * 3 + 3);
  if (out == NULL) return NULL;
  for (i = 0; i < length; i++) {
    int v = sextet((uint8_t)text[i], url);
    if (v < 0) return NULL;
    value = ((value << 6) | (uint32_t)v) & 0xFFFFFF;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (uint8_t)((value >> bits) & 0xFF);
    }
  }
  /* The leftover bits must be zero: otherwise two texts would decode to the same bytes. */
  if ((value & ((1u << bits) - 1)) != 0) return NULL;
  out[o] = 0;
  *out_length = o;
  return out;
}

uint8_t *licvi_base64url_decode(licvi_arena *arena, const char *text, size_t length,
                                size_t *out_length) {
  return decode(arena, text, length, 1, out_length);
}

uint8_t *licvi_base64_decode(licvi_arena *arena, const char *text, size_t length,
                             size_t *out_length) {
  size_t pad = 0;
  if (length == 0 || length % 4 != 0) return NULL;
  if (text[length - 1] == '=') pad++;
  if (pad == 1 && text[length - 2] == '=') pad++;
  return decode(arena, text, length - pad, 0, out_length);
}

char *licvi_base64url_encode(licvi_arena *arena, const uint8_t *bytes, size_t length,
                             size_t *out_length) {
  static const char alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  char *out = licvi_alloc(arena, length / 3 * 4 + 5);
  size_t i = 0, o = 0;
  if (out == NULL) return NULL;
  for (; i + 2 < length; i += 3) {
    uint32_t n = ((uint32_t)bytes[i] << 16) | ((uint32_t)bytes[i + 1] << 8) | bytes[i + 2];
    out[o++] = alphabet[n >> 18];
    out[o++] = alphabet[(n >> 12) & 63];
    out[o++] = alphabet[(n >> 6) & 63];
    out[o++] = alphabet[n & 63];
  }
  if (length - i == 1) {
    uint32_t n = (uint32_t)bytes[i] << 16;
    out[o++] = alphabet[n >> 18];
    out[o++] = alphabet[(n >> 12) & 63];
  } else if (length - i == 2) {
    uint32_t n = ((uint32_t)bytes[i] << 16) | ((uint32_t)bytes[i + 1] << 8);
    out[o++] = alphabet[n >> 18];
    out[o++] = alphabet[(n >> 12) & 63];
    out[o++] = alphabet[(n >> 6) & 63];
  }
  out[o] = '\0';
  *out_length = o;
  return out;
}

/* ---- times --------------------------------------------------------------------------------- */

/* The widest time a JavaScript Date holds, in milliseconds either side of 1970. */
#define MAX_DATE_MS 8.64e15

int licvi_is_date_seconds(double seconds) {
  return fabs(seconds * 1000) <= MAX_DATE_MS;
}

int licvi_is_safe_integer(double value) {
  return isfinite(value) && floor(value) == value && fabs(value) <= 9007199254740991.0;
}

/* Days from 1970-01-01 to a date of the proleptic Gregorian calendar (month 1 to 12). */
static double days_from_civil(double year, int month, int day) {
  double y = month <= 2 ? year - 1 : year;
  double era = floor(y / 400);
  double yoe = y - era * 400;
  int mp = (month + 9) % 12;
  double doy = floor((153 * mp + 2) / 5) + day - 1;
  double doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

static int digits(const char *s, size_t length, size_t at, size_t count, int *out) {
  size_t i;
  int value = 0;
  if (length - at < count || at > length) return 0;
  for (i = 0; i < count; i++) {
    char c = s[at + i];
    if (c < '0' || c > '9') return 0;
    value = value * 10 + (c - '0');
  }
  *out = value;
  return 1;
}

/*
 * The ECMAScript date time string format, as Date.parse reads it: YYYY[-MM[-DD]], or ±YYYYYY,
 * then optionally T (or a space) HH:mm[:ss[.s+]] and Z or ±HH:mm. A date and time without an
 * offset is read as UTC (JavaScript reads it in the local time zone).
 */
double licvi_parse_date(const char *s, size_t n) {
  size_t at = 0;
  int year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0, ms = 0;
  int sign = 1, offset_minutes = 0;
  double days, time;
  if (s == NULL) return NAN;
  if (n > 0 && (s[0] == '+' || s[0] == '-')) {
    sign = s[0] == '-' ? -1 : 1;
    if (!digits(s, n, 1, 6, &year)) return NAN;
    if (sign < 0 && year == 0) return NAN;
    at = 7;
  } else {
    if (!digits(s, n, 0, 4, &year)) return NAN;
    at = 4;
  }
  if (at < n && s[at] == '-') {
    if (!digits(s, n, at + 1, 2, &month) || month < 1 || month > 12) return NAN;
    at += 3;
    if (at < n && s[at] == '-') {
      if (!digits(s, n, at + 1, 2, &day) || day < 1 || day > 31) return NAN;
      at += 3;
    }
  }
  if (at < n && (s[at] == 'T' || s[at] == 't' || s[at] == ' ')) {
    if (!digits(s, n, at + 1, 2, &hour) || at + 3 >= n || s[at + 3] != ':' ||
        !digits(s, n, at + 4, 2, &minute))
      return NAN;
    at += 6;
    if (at < n && s[at] == ':') {
      if (!digits(s, n, at + 1, 2, &second)) return NAN;
      at += 3;
      if (at < n && s[at] == '.') {
        size_t count = 0;
        at++;
        while (at < n && s[at] >= '0' && s[at] <= '9') {
          /* Only milliseconds count; finer digits are cut. */
          if (count < 3) ms = ms * 10 + (s[at] - '0');
          count++;
          at++;
        }
        if (count == 0) return NAN;
        while (count < 3) {
          ms *= 10;
          count++;
        }
      }
    }
    if (hour > 24 || minute > 59 || second > 59) return NAN;
    if (hour == 24 && (minute != 0 || second != 0 || ms != 0)) return NAN;
    if (at < n && (s[at] == 'Z' || s[at] == 'z')) {
      at++;
    } else if (at < n && (s[at] == '+' || s[at] == '-')) {
      int offset_sign = s[at] == '-' ? -1 : 1, oh, om;
      if (!digits(s, n, at + 1, 2, &oh)) return NAN;
      if (at + 3 < n && s[at + 3] == ':') {
        if (!digits(s, n, at + 4, 2, &om)) return NAN;
        at += 6;
      } else {
        if (!digits(s, n, at + 3, 2, &om)) return NAN;
        at += 5;
      }
      if (oh > 23 || om > 59) return NAN;
      offset_minutes = offset_sign * (oh * 60 + om);
    }
  }
  if (at != n) return NAN;
  days = days_from_civil((double)sign * year, month, day);
  time = days * 86400000.0 + hour * 3600000.0 + minute * 60000.0 + second * 1000.0 + ms -
         offset_minutes * 60000.0;
  if (fabs(time) > MAX_DATE_MS) return NAN;
  return time;
}

void licvi_format_date(double milliseconds, char out[32]) {
  double t = trunc(milliseconds), days, in_day, z, era, doe, yoe, doy, mp;
  int day, month, hour, minute, second, ms;
  long year, ms_of_day;
  char text[128];
  if (!(fabs(t) <= MAX_DATE_MS)) {
    strcpy(out, "Invalid Date");
    return;
  }
  /* Days to a civil date, in the proleptic Gregorian calendar. */
  days = floor(t / 86400000.0);
  in_day = t - days * 86400000.0;
  z = days + 719468;
  era = floor(z / 146097);
  doe = z - era * 146097;
  yoe = floor((doe - floor(doe / 1460) + floor(doe / 36524) - floor(doe / 146096)) / 365);
  doy = doe - (365 * yoe + floor(yoe / 4) - floor(yoe / 100));
  mp = floor((5 * doy + 2) / 153);
  day = (int)(doy - floor((153 * mp + 2) / 5) + 1);
  month = (int)(mp < 10 ? mp + 3 : mp - 9);
  year = (long)(yoe + era * 400 + (month <= 2 ? 1 : 0));
  ms_of_day = (long)in_day;
  hour = (int)(ms_of_day / 3600000);
  minute = (int)(ms_of_day / 60000 % 60);
  second = (int)(ms_of_day / 1000 % 60);
  ms = (int)(ms_of_day % 1000);
  /* The widest text is 27 characters (+275760-09-13T00:00:00.000Z); the buffer leaves room. */
  if (year >= 0 && year <= 9999) {
    snprintf(text, sizeof text, "%04ld-%02d-%02dT%02d:%02d:%02d.%03dZ", year, month, day, hour,
             minute, second, ms);
  } else {
    snprintf(text, sizeof text, "%c%06ld-%02d-%02dT%02d:%02d:%02d.%03dZ", year < 0 ? '-' : '+',
             year < 0 ? -year : year, month, day, hour, minute, second, ms);
  }
  memcpy(out, text, 31);
  out[31] = '\0';
}

/* The UTF-16 order of a code point: supplementary ones sort as their surrogates do. */
static uint64_t utf16_rank(uint32_t cp) {
  if (cp >= 0x10000) return ((uint64_t)0xD800 << 21) + cp;
  return (uint64_t)cp << 21;
}

/* The code point at s[*i] (UTF-8, or WTF-8 for a lone surrogate); a stray byte is itself. */
static uint32_t next_code_point(const char *text, size_t length, size_t *i) {
  const uint8_t *s = (const uint8_t *)text;
  uint8_t c = s[*i];
  size_t need = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
  uint32_t cp = need == 3 ? (c & 0x07u) : need == 2 ? (c & 0x0Fu) : need == 1 ? (c & 0x1Fu) : c;
  size_t k;
  if (need == 0 || length - *i <= need) {
    (*i)++;
    return c;
  }
  for (k = 1; k <= need; k++) cp = (cp << 6) | (s[*i + k] & 0x3Fu);
  *i += need + 1;
  return cp;
}

int licvi_compare_utf16(const char *a, size_t a_length, const char *b, size_t b_length) {
  size_t i = 0, j = 0;
  while (i < a_length && j < b_length) {
    uint64_t x = utf16_rank(next_code_point(a, a_length, &i));
    uint64_t y = utf16_rank(next_code_point(b, b_length, &j));
    if (x != y) return x < y ? -1 : 1;
  }
  if (i < a_length) return 1;
  if (j < b_length) return -1;
  return 0;
}

double licvi_now_ms(void) {
#if defined(CLOCK_REALTIME)
  struct timespec now;
  if (clock_gettime(CLOCK_REALTIME, &now) == 0)
    return (double)now.tv_sec * 1000.0 + (double)(now.tv_nsec / 1000000);
#endif
  return (double)time(NULL) * 1000.0;
}
