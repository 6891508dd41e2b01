package robots

import (
	"fmt"
	"testing"
	"time"
)

// TestTableDropsOnlyIdleLines checks the promise a full table of lines
// keeps: it drops a line that holds nothing back, and keeps one that
// holds a request (a waiter, a pause, a send within its delay), so that
// forgetting a line never lets a request past the ones queued before it
// or inside a delay.
func TestTableDropsOnlyIdleLines(t *testing.T) {
	now := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		hold func(*line)
		kept bool
	}{
		{"idle", func(*line) {}, false},
		{"a waiter", func(l *line) { l.join() }, true},
		{"a waiter gone", func(l *line) { l.leave(l.join()) }, false},
		{"a pause running", func(l *line) { l.pauseUntil(now.Add(time.Minute)) }, true},
		{"a pause ended", func(l *line) { l.pauseUntil(now.Add(-time.Second)) }, false},
		{"a send within its delay", func(l *line) {
			l.delay = time.Minute
			l.sent.Store(now.Add(-time.Second).UnixNano())
		}, true},
		{"a send past its delay", func(l *line) {
			l.delay = time.Minute
			l.sent.Store(now.Add(-2 * time.Minute).UnixNano())
		}, false},
		{"a store slot within its delay", func(l *line) {
			l.delay = time.Minute
			l.last = now.Add(-time.Second)
		}, true},
		{"the store's next slot ahead", func(l *line) { l.next = now.Add(time.Second) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines table[*line]
			lines.init(minSchedules, func() time.Time { return now }, func(key OriginKey) *line { return &line{key: key} })
			first := lines.get("http://first.example")
			tt.hold(first)
			// Twice the table's size in new origins, each idle: well short
			// of the overflow at which a busy line goes anyway.
			for i := range 2 * minSchedules {
				lines.get(OriginKey(fmt.Sprintf("http://new%d.example", i)))
			}
			if kept := lines.get("http://first.example") == first; kept != tt.kept {
				t.Errorf("line kept = %v, want %v", kept, tt.kept)
			}
		})
	}
}
