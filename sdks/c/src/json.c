/*
 * A JSON reader and writer of its own, as strict as JavaScript's JSON.parse: RFC 8259 only, no
 * NaN or Infinity, no byte order mark, no trailing commas. Numbers are IEEE 754 doubles.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Deeper documents are refused rather than risk the stack. No document of the platform comes close. */
#define MAX_DEPTH 256

typedef struct parser {
  licvi_arena *arena;
  const char *text;
  size_t length;
  size_t at;
  int depth;
} parser;

static licvi_json *parse_value(parser *p);

static void skip_space(parser *p) {
  while (p->at < p->length) {
    char c = p->text[p->at];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
    p->at++;
  }
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

licvi_json *licvi_json_new(licvi_arena *arena, licvi_json_type type) {
  licvi_json *value = licvi_alloc(arena, sizeof(licvi_json));
  if (value != NULL) value->type = type;
  return value;
}

licvi_json *licvi_json_new_number(licvi_arena *arena, double number) {
  licvi_json *value = licvi_json_new(arena, LICVI_JSON_NUMBER);
  if (value != NULL) value->number = number;
  return value;
}

licvi_json *licvi_json_new_string(licvi_arena *arena, const char *text, size_t length) {
  licvi_json *value = licvi_json_new(arena, LICVI_JSON_STRING);
  if (value == NULL) return NULL;
  value->string = licvi_strndup(arena, text, length);
  if (value->string == NULL) return NULL;
  value->length = length;
  return value;
}

licvi_json *licvi_json_new_cstring(licvi_arena *arena, const char *text) {
  if (text == NULL) return licvi_json_new(arena, LICVI_JSON_NULL);
  return licvi_json_new_string(arena, text, strlen(text));
}

void licvi_json_append(licvi_json *array, licvi_json *value) {
  if (array == NULL || value == NULL) return;
  value->next = NULL;
  if (array->last == NULL) array->first = value;
  else array->last->next = value;
  array->last = value;
  array->length++;
}

static licvi_json *find_member(const licvi_json *object, const char *key, size_t key_length) {
  licvi_json *member;
  for (member = object->first; member != NULL; member = member->next) {
    if (member->key_length == key_length && memcmp(member->key, key, key_length) == 0)
      return member;
  }
  return NULL;
}

/* Sets a member: a second one of the same name replaces the value, in the first one's place. */
static void put_member(licvi_json *object, licvi_json *value) {
  licvi_json *existing = find_member(object, value->key, value->key_length);
  if (existing != NULL) {
    licvi_json *next = existing->next;
    *existing = *value;
    existing->next = next;
    if (object->last == existing || next == NULL) object->last = existing;
    return;
  }
  licvi_json_append(object, value);
}

int licvi_json_set(licvi_arena *arena, licvi_json *object, const char *key, licvi_json *value) {
  size_t key_length;
  if (object == NULL || value == NULL || key == NULL) return 0;
  key_length = strlen(key);
  value->key = licvi_strndup(arena, key, key_length);
  if (value->key == NULL) return 0;
  value->key_length = key_length;
  put_member(object, value);
  return 1;
}

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int read_hex4(parser *p, unsigned *out) {
  unsigned value = 0;
  int i;
  if (p->length - p->at < 4) return 0;
  for (i = 0; i < 4; i++) {
    int digit = hex_value(p->text[p->at + (size_t)i]);
    if (digit < 0) return 0;
    value = value * 16 + (unsigned)digit;
  }
  p->at += 4;
  *out = value;
  return 1;
}

/* Writes a code point as UTF-8. A lone surrogate is written as its three bytes (WTF-8). */
static size_t put_utf8(char *out, unsigned cp) {
  if (cp < 0x80) {
    out[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    out[0] = (char)(0xC0 | (cp >> 6));
    out[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | (cp >> 12));
    out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (cp >> 18));
  out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  out[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* Reads a string after its opening quote. Escapes never make it longer than its source. */
static int parse_string(parser *p, const char **out, size_t *out_length) {
  size_t start = p->at;
  size_t end = start;
  size_t n = 0;
  char *buffer;
  /* Finds the closing quote first, to size the buffer. */
  while (end < p->length && p->text[end] != '"') {
    if (p->text[end] == '\\') end++;
    end++;
  }
  if (end >= p->length) return 0;
  buffer = licvi_alloc(p->arena, end - start + 1);
  if (buffer == NULL) return 0;
  while (p->at < end) {
    unsigned char c = (unsigned char)p->text[p->at++];
    if (c < 0x20) return 0;
    if (c != '\\') {
      buffer[n++] = (char)c;
      continue;
    }
    if (p->at >= end) return 0;
    c = (unsigned char)p->text[p->at++];
    switch (c) {
      case '"': buffer[n++] = '"'; break;
      case '\\': buffer[n++] = '\\'; break;
      case '/': buffer[n++] = '/'; break;
      case 'b': buffer[n++] = '\b'; break;
      case 'f': buffer[n++] = '\f'; break;
      case 'n': buffer[n++] = '\n'; break;
      case 'r': buffer[n++] = '\r'; break;
      case 't': buffer[n++] = '\t'; break;
      case 'u': {
        unsigned cp;
        if (!read_hex4(p, &cp) || p->at > end) return 0;
        if (cp >= 0xD800 && cp <= 0xDBFF && end - p->at >= 6 && p->text[p->at] == '\\' &&
            p->text[p->at + 1] == 'u') {
          size_t saved = p->at;
          unsigned low;
          p->at += 2;
          if (read_hex4(p, &low) && low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else {
            p->at = saved;
          }
        }
        n += put_utf8(buffer + n, cp);
        break;
      }
      default:
        return 0;
    }
  }
  p->at = end + 1;
  buffer[n] = '\0';
  *out = buffer;
  *out_length = n;
  return 1;
}

/*
 * A JSON number's text as the nearest double. strtod reads the decimal point of the locale, and
 * asking for the locale is not safe while another thread sets it. So the number is handed to
 * strtod without a point: "12.5e3" is read as "125e2", which means the same in every locale.
 */
static double to_double(const char *text, size_t length) {
  char small[64];
  char *buffer = small;
  size_t i = 0, n = 0, fraction_digits = 0;
  long long exponent = 0;
  int exponent_negative = 0;
  double value;
  if (length + 32 > sizeof small) {
    buffer = malloc(length + 32);
    if (buffer == NULL) return NAN;
  }
  if (i < length && text[i] == '-') buffer[n++] = text[i++];
  while (i < length && is_digit(text[i])) buffer[n++] = text[i++];
  if (i < length && text[i] == '.') {
    i++;
    while (i < length && is_digit(text[i])) {
      buffer[n++] = text[i++];
      fraction_digits++;
    }
  }
  if (i < length && (text[i] == 'e' || text[i] == 'E')) {
    i++;
    if (i < length && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    /* Past a billion, the number is 0 or infinite whatever its digits: stop counting there. */
    while (i < length && is_digit(text[i])) {
      if (exponent < 1000000000LL) exponent = exponent * 10 + (text[i] - '0');
      i++;
    }
  }
  if (exponent_negative) exponent = -exponent;
  exponent -= (long long)fraction_digits;
  snprintf(buffer + n, 32, "e%lld", exponent);
  value = strtod(buffer, NULL);
  if (buffer != small) free(buffer);
  return value;
}

static licvi_json *parse_number(parser *p) {
  size_t start = p->at;
  int simple = 1;
  licvi_json *value;
  if (p->at < p->length && p->text[p->at] == '-') p->at++;
  if (p->at >= p->length || !is_digit(p->text[p->at])) return NULL;
  if (p->text[p->at] == '0') {
    p->at++;
  } else {
    while (p->at < p->length && is_digit(p->text[p->at])) p->at++;
  }
  if (p->at < p->length && p->text[p->at] == '.') {
    simple = 0;
    p->at++;
    if (p->at >= p->length || !is_digit(p->text[p->at])) return NULL;
    while (p->at < p->length && is_digit(p->text[p->at])) p->at++;
  }
  if (p->at < p->length && (p->text[p->at] == 'e' || p->text[p->at] == 'E')) {
    simple = 0;
    p->at++;
    if (p->at < p->length && (p->text[p->at] == '+' || p->text[p->at] == '-')) p->at++;
    if (p->at >= p->length || !is_digit(p->text[p->at])) return NULL;
    while (p->at < p->length && is_digit(p->text[p->at])) p->at++;
  }
  value = licvi_json_new(p->arena, LICVI_JSON_NUMBER);
  if (value == NULL) return NULL;
  if (simple && p->at - start <= 16) {
    /* Up to 15 digits: exact in a double, no rounding to get wrong. */
    size_t i = start;
    int negative = p->text[i] == '-';
    double number = 0;
    if (negative) i++;
    if (p->at - i <= 15) {
      for (; i < p->at; i++) number = number * 10 + (p->text[i] - '0');
      value->number = negative ? -number : number;
      return value;
    }
  }
  value->number = to_double(p->text + start, p->at - start);
  return value;
}

static int match_word(parser *p, const char *word) {
  size_t n = strlen(word);
  if (p->length - p->at < n || memcmp(p->text + p->at, word, n) != 0) return 0;
  p->at += n;
  return 1;
}

static licvi_json *parse_array(parser *p) {
  licvi_json *array = licvi_json_new(p->arena, LICVI_JSON_ARRAY);
  if (array == NULL) return NULL;
  skip_space(p);
  if (p->at < p->length && p->text[p->at] == ']') {
    p->at++;
    return array;
  }
  for (;;) {
    licvi_json *item = parse_value(p);
    if (item == NULL) return NULL;
    licvi_json_append(array, item);
    skip_space(p);
    if (p->at >= p->length) return NULL;
    if (p->text[p->at] == ',') {
      p->at++;
      continue;
    }
    if (p->text[p->at] == ']') {
      p->at++;
      return array;
    }
    return NULL;
  }
}

static licvi_json *parse_object(parser *p) {
  licvi_json *object = licvi_json_new(p->arena, LICVI_JSON_OBJECT);
  if (object == NULL) return NULL;
  skip_space(p);
  if (p->at < p->length && p->text[p->at] == '}') {
    p->at++;
    return object;
  }
  for (;;) {
    const char *key;
    size_t key_length;
    licvi_json *value;
    skip_space(p);
    if (p->at >= p->length || p->text[p->at] != '"') return NULL;
    p->at++;
    if (!parse_string(p, &key, &key_length)) return NULL;
    skip_space(p);
    if (p->at >= p->length || p->text[p->at] != ':') return NULL;
    p->at++;
    value = parse_value(p);
    if (value == NULL) return NULL;
    value->key = key;
    value->key_length = key_length;
    put_member(object, value);
    skip_space(p);
    if (p->at >= p->length) return NULL;
    if (p->text[p->at] == ',') {
      p->at++;
      continue;
    }
    if (p->text[p->at] == '}') {
      p->at++;
      return object;
    }
    return NULL;
  }
}

static licvi_json *parse_value(parser *p) {
  licvi_json *value = NULL;
  char c;
  skip_space(p);
  if (p->at >= p->length) return NULL;
  c = p->text[p->at];
  if (c == '{' || c == '[') {
    if (++p->depth > MAX_DEPTH) return NULL;
    p->at++;
    value = c == '{' ? parse_object(p) : parse_array(p);
    p->depth--;
    return value;
  }
  if (c == '"') {
    const char *text;
    size_t length;
    p->at++;
    if (!parse_string(p, &text, &length)) return NULL;
    value = licvi_json_new(p->arena, LICVI_JSON_STRING);
    if (value == NULL) return NULL;
    value->string = text;
    value->length = length;
    return value;
  }
  if (c == '-' || is_digit(c)) return parse_number(p);
  if (match_word(p, "true")) return licvi_json_new(p->arena, LICVI_JSON_TRUE);
  if (match_word(p, "false")) return licvi_json_new(p->arena, LICVI_JSON_FALSE);
  if (match_word(p, "null")) return licvi_json_new(p->arena, LICVI_JSON_NULL);
  return NULL;
}

licvi_json *licvi_json_parse(licvi_arena *arena, const char *text, size_t length) {
  parser p;
  licvi_json *value;
  if (arena == NULL || (text == NULL && length > 0)) return NULL;
  if (!licvi_utf8_valid((const uint8_t *)text, length)) return NULL;
  p.arena = arena;
  p.text = text;
  p.length = length;
  p.at = 0;
  p.depth = 0;
  value = parse_value(&p);
  if (value == NULL) return NULL;
  skip_space(&p);
  return p.at == p.length ? value : NULL;
}

const licvi_json *licvi_json_get(const licvi_json *object, const char *key) {
  if (object == NULL || object->type != LICVI_JSON_OBJECT || key == NULL) return NULL;
  return find_member(object, key, strlen(key));
}

int licvi_json_is_string(const licvi_json *value) {
  return value != NULL && value->type == LICVI_JSON_STRING;
}

int licvi_json_is_object(const licvi_json *value) {
  return value != NULL && value->type == LICVI_JSON_OBJECT;
}

int licvi_json_string_equals(const licvi_json *value, const char *text) {
  size_t length;
  if (!licvi_json_is_string(value) || text == NULL) return 0;
  length = strlen(text);
  return value->length == length && memcmp(value->string, text, length) == 0;
}

int licvi_json_equal(const licvi_json *a, const licvi_json *b) {
  const licvi_json *x, *y;
  if (a == NULL || b == NULL) return a == b;
  if (a->type != b->type) return 0;
  switch (a->type) {
    case LICVI_JSON_NUMBER:
      return a->number == b->number;
    case LICVI_JSON_STRING:
      return a->length == b->length && memcmp(a->string, b->string, a->length) == 0;
    case LICVI_JSON_ARRAY:
      if (a->length != b->length) return 0;
      for (x = a->first, y = b->first; x != NULL && y != NULL; x = x->next, y = y->next) {
        if (!licvi_json_equal(x, y)) return 0;
      }
      return x == NULL && y == NULL;
    case LICVI_JSON_OBJECT:
      if (a->length != b->length) return 0;
      for (x = a->first; x != NULL; x = x->next) {
        y = find_member(b, x->key, x->key_length);
        if (y == NULL || !licvi_json_equal(x, y)) return 0;
      }
      return 1;
    default:
      return 1;
  }
}

/* ---- writing ------------------------------------------------------------------------------- */

typedef struct writer {
  char *data;
  size_t length;
  size_t capacity;
  int failed;
} writer;

static void put(writer *w, const char *text, size_t length) {
  if (w->failed) return;
  if (w->length + length + 1 > w->capacity) {
    size_t capacity = w->capacity == 0 ? 256 : w->capacity;
    char *grown;
    while (capacity < w->length + length + 1) {
      if (capacity > ((size_t)-1) / 2) {
        w->failed = 1;
        return;
      }
      capacity *= 2;
    }
    grown = realloc(w->data, capacity);
    if (grown == NULL) {
      w->failed = 1;
      return;
    }
    w->data = grown;
    w->capacity = capacity;
  }
  memcpy(w->data + w->length, text, length);
  w->length += length;
  w->data[w->length] = '\0';
}

static void put_string(writer *w, const char *text, size_t length) {
  static const char hex[] = "0123456789abcdef";
  size_t i, run = 0;
  put(w, "\"", 1);
  for (i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text[i];
    char escape[8];
    size_t escape_length = 0;
    if (c == '"' || c == '\\') {
      escape[0] = '\\';
      escape[1] = (char)c;
      escape_length = 2;
    } else if (c < 0x20) {
      escape[0] = '\\';
      escape[1] = 'u';
      escape[2] = '0';
      escape[3] = '0';
      escape[4] = hex[c >> 4];
      escape[5] = hex[c & 15];
      escape_length = 6;
    } else if (c == 0xED && i + 2 < length && ((unsigned char)text[i + 1] & 0xE0) == 0xA0) {
      /* A lone surrogate (WTF-8) goes back to its escape, to stay valid JSON text. */
      unsigned cp = 0xD000 | (((unsigned char)text[i + 1] & 0x3F) << 6) |
                    ((unsigned char)text[i + 2] & 0x3F);
      escape[0] = '\\';
      escape[1] = 'u';
      escape[2] = hex[(cp >> 12) & 15];
      escape[3] = hex[(cp >> 8) & 15];
      escape[4] = hex[(cp >> 4) & 15];
      escape[5] = hex[cp & 15];
      escape_length = 6;
    }
    if (escape_length == 0) {
      run++;
      continue;
    }
    put(w, text + i - run, run);
    run = 0;
    put(w, escape, escape_length);
    if (c == 0xED) i += 2;
  }
  put(w, text + length - run, run);
  put(w, "\"", 1);
}

/* printf writes the locale's decimal point, which may be more than one byte: makes it a ".". */
static void with_point(char *text) {
  size_t from, to = 0;
  int in_point = 0;
  for (from = 0; text[from] != '\0'; from++) {
    char c = text[from];
    if (is_digit(c) || c == '-' || c == '+' || c == 'e' || c == 'E') {
      text[to++] = c;
      in_point = 0;
    } else if (!in_point) {
      text[to++] = '.';
      in_point = 1;
    }
  }
  text[to] = '\0';
}

/* The shortest text that reads back as the same double, with "." whatever the locale. */
static void put_number(writer *w, double number) {
  char text[64];
  int precision;
  if (!isfinite(number)) {
    /* As JSON.stringify writes it. */
    put(w, "null", 4);
    return;
  }
  if (number == 0) {
    put(w, "0", 1);
    return;
  }
  for (precision = 15; precision <= 17; precision++) {
    snprintf(text, sizeof text, "%.*g", precision, number);
    with_point(text);
    if (to_double(text, strlen(text)) == number) break;
  }
  put(w, text, strlen(text));
}

static void write_value(writer *w, const licvi_json *value) {
  const licvi_json *child;
  switch (value->type) {
    case LICVI_JSON_NULL: put(w, "null", 4); break;
    case LICVI_JSON_FALSE: put(w, "false", 5); break;
    case LICVI_JSON_TRUE: put(w, "true", 4); break;
    case LICVI_JSON_NUMBER: put_number(w, value->number); break;
    case LICVI_JSON_STRING: put_string(w, value->string, value->length); break;
    case LICVI_JSON_ARRAY:
      put(w, "[", 1);
      for (child = value->first; child != NULL; child = child->next) {
        if (child != value->first) put(w, ",", 1);
        write_value(w, child);
      }
      put(w, "]", 1);
      break;
    case LICVI_JSON_OBJECT:
      put(w, "{", 1);
      for (child = value->first; child != NULL; child = child->next) {
        if (child != value->first) put(w, ",", 1);
        put_string(w, child->key, child->key_length);
        put(w, ":", 1);
        write_value(w, child);
      }
      put(w, "}", 1);
      break;
  }
}

char *licvi_json_write(const licvi_json *value, size_t *length) {
  writer w = {NULL, 0, 0, 0};
  if (value == NULL) return NULL;
  write_value(&w, value);
  put(&w, "", 0);
  if (w.failed) {
    free(w.data);
    return NULL;
  }
  if (length != NULL) *length = w.length;
  return w.data;
}
