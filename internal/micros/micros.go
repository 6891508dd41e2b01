// Package micros turns times and durations into the whole microseconds a
// fleet store keeps, rounding up, so that no slot a store reckons from
// them is a nanosecond before the time, or closer than the interval, it
// was asked by. A store rounds a Limit down, so that a slot it allows is
// never after it.
package micros

import "time"

// Up returns t in Unix microseconds, rounded up.
func Up(t time.Time) int64 {
	us := t.UnixMicro()
	if t.Nanosecond()%1000 != 0 {
		us++
	}
	return us
}

// UpDuration returns d in microseconds, rounded up; a negative d is 0.
func UpDuration(d time.Duration) int64 {
	return int64((max(d, 0) + time.Microsecond - 1) / time.Microsecond)
}
