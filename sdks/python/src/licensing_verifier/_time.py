"""Times as the JavaScript SDK handles them: milliseconds, Date's range, and toISOString."""

import math
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Optional, Union

from ._errors import InvalidOptionError
from ._text import is_number

# A JavaScript Date holds 100,000,000 days either side of 1970, in milliseconds.
MAX_DATE_MS = 8.64e15

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_DAY_MS = 86_400_000

Now = Union[datetime, int, float, None]


def now_ms(now: Now) -> float:
    """`now` in Unix milliseconds: a timezone-aware datetime, Unix seconds, or None for the clock."""
    if now is None:
        return (datetime.now(timezone.utc) - _EPOCH) / timedelta(milliseconds=1)
    if isinstance(now, datetime):
        if now.tzinfo is None or now.utcoffset() is None:
            raise InvalidOptionError("now is a timezone-aware datetime (or Unix seconds)")
        return (now - _EPOCH) / timedelta(milliseconds=1)
    if is_number(now) and math.isfinite(now):
        return now * 1000
    raise InvalidOptionError("now is a timezone-aware datetime or Unix seconds")


def seconds_option(value: Any, name: str, default: float) -> float:
    """A non-negative number of seconds, or the default when None."""
    if value is None:
        return default
    if not is_number(value) or not math.isfinite(value) or value < 0:
        raise InvalidOptionError(name + " is a non-negative number of seconds")
    return value


def fits_date(seconds: Any) -> bool:
    """Whether Unix seconds fit in a JavaScript Date (so that they can be shown as ISO 8601)."""
    return is_number(seconds) and abs(seconds * 1000) <= MAX_DATE_MS


def iso_from_seconds(seconds: Union[int, float]) -> str:
    """Unix seconds as Date#toISOString writes them: always milliseconds, always UTC (`Z`)."""
    # A Date keeps whole milliseconds, cut toward zero.
    ms = int(seconds) * 1000 if isinstance(seconds, int) else math.trunc(seconds * 1000)
    days, rest = divmod(ms, _DAY_MS)
    year, month, day = _civil_from_days(days)
    hours, rest = divmod(rest, 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    secs, millis = divmod(rest, 1000)
    if 0 <= year <= 9999:
        year_text = "%04d" % year
    else:
        year_text = ("+" if year > 0 else "-") + "%06d" % abs(year)
    return "%s-%02d-%02dT%02d:%02d:%02d.%03dZ" % (year_text, month, day, hours, minutes, secs, millis)


def _civil_from_days(days: int):
    """The proleptic Gregorian date of a day count from 1970-01-01, for any year."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (1 if month <= 2 else 0), month, day


def _days_from_civil(year: int, month: int, day: int) -> int:
    year -= 1 if month <= 2 else 0
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


_ISO = re.compile(
    r"(?P<year>[0-9]{4}|[+-][0-9]{6})(?:-(?P<month>[0-9]{2})(?:-(?P<day>[0-9]{2}))?)?"
    r"(?:[Tt ](?P<hour>[0-9]{2}):(?P<minute>[0-9]{2})(?::(?P<second>[0-9]{2})(?:\.(?P<fraction>[0-9]+))?)?"
    r"(?P<zone>[Zz]|[+-][0-9]{2}:?[0-9]{2})?)?"
)


def parse_date_ms(text: Any) -> Optional[int]:
    """An ISO 8601 date or date-time in Unix milliseconds, or None when it is not one.

    These are the forms the platform writes and that JavaScript's Date.parse reads alike. A day past
    the month's end rolls over, as there. A date-time without an offset is read as UTC (JavaScript
    reads it as local time; the platform always writes `Z`). Other forms Date.parse reads (RFC 2822,
    "March 1, 2027") are not read here.
    """
    if not isinstance(text, str):
        return None
    match = _ISO.fullmatch(text)
    if not match:
        return None
    if match.group("year") == "-000000":
        return None
    year = int(match.group("year"))
    month = int(match.group("month") or 1)
    day = int(match.group("day") or 1)
    hour = int(match.group("hour") or 0)
    minute = int(match.group("minute") or 0)
    second = int(match.group("second") or 0)
    millis = int((match.group("fraction") or "0")[:3].ljust(3, "0"))
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute <= 59 and second <= 59):
        return None
    if hour > 24 or (hour == 24 and (minute or second or millis)):
        return None
    offset = 0
    zone = match.group("zone")
    if zone and zone not in ("Z", "z"):
        digits = zone[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:])
        if hours > 23 or minutes > 59:
            return None
        offset = (hours * 60 + minutes) * 60_000 * (1 if zone[0] == "+" else -1)
    ms = _days_from_civil(year, month, day) * _DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000
    ms += millis - offset
    return ms if abs(ms) <= MAX_DATE_MS else None
