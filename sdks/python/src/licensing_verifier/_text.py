"""Text, base64 and JSON exactly as the JavaScript SDK reads them.

One input has one reading. Base64 is canonical: no character outside the alphabet, no wrong
padding, no padding bits set. JSON is read as JavaScript's JSON.parse reads it: numbers are
doubles, NaN and Infinity are not JSON, the last of two equal members counts.
"""

import base64
import binascii
import json
import re
from typing import Any, Optional

# JavaScript's String.prototype.trim and /\s/: WhiteSpace and LineTerminator of ECMAScript.
# Python's own str.strip() differs (it strips U+001C to U+001F and U+0085, keeps U+FEFF).
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_WHITESPACE_RUN = re.compile("[" + re.escape(JS_WHITESPACE) + "]+")

_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")

# The largest integer a double holds exactly: 2^53 - 1.
MAX_SAFE_INTEGER = 9007199254740991

# A parse that failed; JSON null is None, so None cannot say it.
INVALID = object()


def js_trim(text: str) -> str:
    """The text without the whitespace JavaScript's trim() removes."""
    return text.strip(JS_WHITESPACE)


def without_whitespace(text: str) -> str:
    """The text with every run of JavaScript whitespace removed."""
    return _JS_WHITESPACE_RUN.sub("", text)


def from_base64url(segment: str) -> Optional[bytes]:
    """The bytes of canonical unpadded base64url, or None."""
    if not _BASE64URL.fullmatch(segment) or len(segment) % 4 == 1:
        return None
    try:
        data = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        return None
    # Padding bits must be zero: otherwise two texts would decode to the same bytes.
    if base64.urlsafe_b64encode(data).decode("ascii").rstrip("=") != segment:
        return None
    return data


def base64url(data: bytes) -> str:
    """Unpadded base64url."""
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def from_base64(text: str) -> Optional[bytes]:
    """The bytes of canonical padded standard base64 (whitespace already removed), or None."""
    if not text or not _BASE64.fullmatch(text):
        return None
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if base64.b64encode(data).decode("ascii") != text:
        return None
    return data


def utf8(data: bytes) -> Optional[str]:
    """Strict UTF-8, or None. A byte order mark is kept as a character."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def utf8_bytes(text: str) -> bytes:
    """UTF-8 as JavaScript's TextEncoder writes it: a lone surrogate becomes U+FFFD."""
    return re.sub("[\ud800-\udfff]", "\ufffd", text).encode("utf-8")


def _reject_constant(name: str) -> Any:
    raise ValueError("not JSON: " + name)


def _js_int(literal: str) -> Any:
    # JavaScript reads every number as a double. Exact below 2^53; a longer literal is read as a
    # double too, so that it compares and overflows as it does there.
    return int(literal) if len(literal) <= 16 else float(literal)


def parse_json(text: str) -> Any:
    """The JSON value, or INVALID."""
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_js_int)
    except (ValueError, RecursionError):
        return INVALID


def json_object_of(segment: str) -> Optional[dict]:
    """The JSON object a base64url segment holds, or None."""
    data = from_base64url(segment)
    text = None if data is None else utf8(data)
    if text is None:
        return None
    value = parse_json(text)
    return value if isinstance(value, dict) else None


def is_number(value: Any) -> bool:
    """A JSON number (a bool is not one)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_safe_integer(value: Any) -> bool:
    """JavaScript's Number.isSafeInteger: a number with no fraction, within ±(2^53 - 1)."""
    if not is_number(value):
        return False
    if isinstance(value, float) and not value.is_integer():
        return False
    return abs(value) <= MAX_SAFE_INTEGER


def string_sort_key(text: str) -> bytes:
    """Sorts as JavaScript's < does: by UTF-16 code units."""
    return text.encode("utf-16-be", "surrogatepass")
