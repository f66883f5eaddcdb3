package licensing

import (
	"fmt"
	"math"
	"time"
)

// Times are compared in milliseconds, as JavaScript compares them.
// A time must fit in a JavaScript Date: at most 8.64e15 milliseconds either side of 1970.
const maxDateMillis = 8.64e15

const millisPerDay = 86_400_000

// maxSafeInteger is 2^53 - 1: the largest integer a double holds exactly with all its neighbours.
const maxSafeInteger = 1<<53 - 1

// isDateSeconds reports whether Unix seconds fit in a JavaScript Date.
func isDateSeconds(seconds float64) bool {
	return math.Abs(float64(seconds*1000)) <= maxDateMillis
}

// safeInteger returns v as an integer when it is a number with no fraction within ±(2^53 - 1).
func safeInteger(v any) (int64, bool) {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// millisOf is the time as JavaScript's Date#getTime gives it: milliseconds since 1970.
func millisOf(t time.Time) float64 {
	return float64(t.UnixMilli())
}

// durationMillis is a duration in milliseconds.
func durationMillis(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

// isoOfMillis writes a time as JavaScript's Date#toISOString does.
// The form is YYYY-MM-DDTHH:MM:SS.sssZ, in UTC, always with milliseconds.
// A year outside 0 to 9999 is written with a sign and six digits (+010000, -000001).
// The time must fit in a Date (the caller checks).
func isoOfMillis(ms int64) string {
	days := floorDiv(ms, millisPerDay)
	rest := ms - days*millisPerDay
	year, month, day := civilOfDays(days)
	var y string
	if year >= 0 && year <= 9999 {
		y = fmt.Sprintf("%04d", year)
	} else if year < 0 {
		y = fmt.Sprintf("-%06d", -year)
	} else {
		y = fmt.Sprintf("+%06d", year)
	}
	return fmt.Sprintf("%s-%02d-%02dT%02d:%02d:%02d.%03dZ", y, month, day,
		rest/3_600_000, rest/60_000%60, rest/1000%60, rest%1000)
}

// isoOfSeconds writes Unix seconds as isoOfMillis does.
// As with JavaScript's Date, a fraction of a millisecond is cut toward zero.
func isoOfSeconds(seconds float64) string {
	return isoOfMillis(int64(math.Trunc(float64(seconds * 1000))))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// civilOfDays turns days since 1970-01-01 into a proleptic Gregorian date.
func civilOfDays(days int64) (year, month, day int64) {
	z := days + 719_468
	era := floorDiv(z, 146_097)
	doe := z - era*146_097
	yoe := (doe - doe/1460 + doe/36_524 - doe/146_096) / 365
	year = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		month = mp + 3
	} else {
		month = mp - 9
	}
	if month <= 2 {
		year++
	}
	return year, month, day
}

// daysOfCivil turns a proleptic Gregorian date into days since 1970-01-01.
// A day past the month's end runs into the next month, as in JavaScript.
func daysOfCivil(year, month, day int64) int64 {
	if month <= 2 {
		year--
	}
	era := floorDiv(year, 400)
	yoe := year - era*400
	mp := (month + 9) % 12
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146_097 + doe - 719_468
}

// parseDate reads a date as JavaScript's Date.parse reads ECMAScript's date time string format.
// It answers milliseconds since 1970, or false when the text is no such date.
//
// The forms are YYYY, YYYY-MM or YYYY-MM-DD, optionally followed by THH:mm, THH:mm:ss or
// THH:mm:ss.s (any number of fraction digits, cut to milliseconds), then optionally Z or ±HH:mm.
// The year may also be written with a sign and six digits (+010000, -000001; never -000000).
// A date without a time is UTC.
// A date with a time but no offset is local time, as in JavaScript.
// Like JavaScript, it takes any day from 01 to 31 (2027-02-30 is 2027-03-02), and 24:00 as the
// end of the day.
// JavaScript reads more forms than these; the platform writes only these.
func parseDate(s string) (int64, bool) {
	r := dateReader{s: s}
	var year int64
	switch {
	case r.peek('+') || r.peek('-'):
		negative := r.peek('-')
		r.i++
		v, ok := r.digits(6)
		if !ok || negative && v == 0 {
			return 0, false
		}
		year = v
		if negative {
			year = -v
		}
	default:
		v, ok := r.digits(4)
		if !ok {
			return 0, false
		}
		year = v
	}
	month, day := int64(1), int64(1)
	if r.peek('-') {
		r.i++
		v, ok := r.digits(2)
		if !ok || v < 1 || v > 12 {
			return 0, false
		}
		month = v
		if r.peek('-') {
			r.i++
			v, ok := r.digits(2)
			if !ok || v < 1 || v > 31 {
				return 0, false
			}
			day = v
		}
	}
	var hour, minute, second, millis int64
	hasTime := false
	if r.peek('T') {
		r.i++
		hasTime = true
		var ok bool
		if hour, ok = r.digits(2); !ok || hour > 24 || !r.take(':') {
			return 0, false
		}
		if minute, ok = r.digits(2); !ok || minute > 59 {
			return 0, false
		}
		if r.take(':') {
			if second, ok = r.digits(2); !ok || second > 59 {
				return 0, false
			}
			if r.take('.') {
				start := r.i
				fraction := int64(0)
				for r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
					if r.i-start < 3 {
						fraction = fraction*10 + int64(r.s[r.i]-'0')
					}
					r.i++
				}
				n := r.i - start
				if n == 0 {
					return 0, false
				}
				for ; n < 3; n++ {
					fraction *= 10
				}
				millis = fraction
			}
		}
		if hour == 24 && (minute != 0 || second != 0 || millis != 0) {
			return 0, false
		}
	}
	offsetMinutes := int64(0)
	hasOffset := false
	switch {
	case r.take('Z'):
		hasOffset = true
	case hasTime && (r.peek('+') || r.peek('-')):
		sign := int64(1)
		if r.peek('-') {
			sign = -1
		}
		r.i++
		h, ok := r.digits(2)
		if !ok || h > 23 || !r.take(':') {
			return 0, false
		}
		m, ok := r.digits(2)
		if !ok || m > 59 {
			return 0, false
		}
		offsetMinutes = sign * (h*60 + m)
		hasOffset = true
	}
	if r.i != len(r.s) {
		return 0, false
	}

	var ms int64
	if hasTime && !hasOffset {
		// Local time: the zone's offset at that wall-clock time, as JavaScript takes it.
		t := time.Date(int(year), time.Month(month), int(day), int(hour), int(minute), int(second),
			int(millis)*int(time.Millisecond), time.Local)
		ms = t.UnixMilli()
	} else {
		ms = daysOfCivil(year, month, day)*millisPerDay +
			((hour*60+minute-offsetMinutes)*60+second)*1000 + millis
	}
	if ms < -maxDateMillis || ms > maxDateMillis {
		return 0, false
	}
	return ms, true
}

type dateReader struct {
	s string
	i int
}

func (r *dateReader) peek(c byte) bool {
	return r.i < len(r.s) && r.s[r.i] == c
}

func (r *dateReader) take(c byte) bool {
	if r.peek(c) {
		r.i++
		return true
	}
	return false
}

// digits reads exactly n decimal digits.
func (r *dateReader) digits(n int) (int64, bool) {
	if len(r.s)-r.i < n {
		return 0, false
	}
	var v int64
	for _, c := range []byte(r.s[r.i : r.i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	r.i += n
	return v, true
}
