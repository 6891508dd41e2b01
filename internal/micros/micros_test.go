package micros

import (
	"testing"
	"time"
)

func TestUp(t *testing.T) {
	base := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		t    time.Time
		want int64
	}{
		{base, base.UnixMicro()},
		{base.Add(time.Nanosecond), base.UnixMicro() + 1},
		{base.Add(999 * time.Nanosecond), base.UnixMicro() + 1},
		{base.Add(time.Microsecond), base.UnixMicro() + 1},
		{base.Add(time.Microsecond + time.Nanosecond), base.UnixMicro() + 2},
		{time.Unix(-1, 1), -999_999},
	} {
		if got := Up(tc.t); got != tc.want {
			t.Errorf("Up(%v) = %d, want %d", tc.t, got, tc.want)
		}
	}
}

func TestUpDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int64
	}{
		{0, 0}, {-time.Second, 0}, {time.Nanosecond, 1}, {time.Microsecond, 1},
		{time.Microsecond + time.Nanosecond, 2}, {time.Second, 1_000_000},
	} {
		if got := UpDuration(tc.d); got != tc.want {
			t.Errorf("UpDuration(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}
