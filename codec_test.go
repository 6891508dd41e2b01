package robots

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// TestRecordEncoding checks that a record survives its stored form with
// one copy of each body, and that any cut of it reads as missing.
func TestRecordEncoding(t *testing.T) {
	now := newClock().Now()
	good := record{Outcome: Parsed, Status: 200, Body: []byte(privateRobots), Size: int64(len(privateRobots)), FetchedAt: now, Expires: now.Add(time.Hour), ETag: `"v1"`}
	rec := record{Outcome: Unreachable, Status: 503, FetchedAt: now, Since: now, RetryAt: now.Add(time.Minute), Failures: 2, Err: "robots: down", Good: &good}
	data := rec.encode()
	if n := bytes.Count(data, []byte(privateRobots)); n != 1 {
		t.Errorf("body stored %d times, want once", n)
	}
	back, err := decodeRecord(data)
	if err != nil || back.Good == nil || string(back.Good.Body) != privateRobots || back.Good.ETag != `"v1"` || back.Failures != 2 || !back.Since.Equal(now) {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	for i := range len(data) {
		if _, err := decodeRecord(data[:i]); err == nil {
			t.Fatalf("record cut at %d of %d bytes read as valid", i, len(data))
		}
	}
	if _, err := decodeRecord([]byte("robots-record v3\n{}")); !errors.Is(err, errNewerRecord) {
		t.Errorf("newer version: %v, want errNewerRecord", err)
	}
}
