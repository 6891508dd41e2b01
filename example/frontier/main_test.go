package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/crawlkit/robots/internal/redistest"
	"github.com/crawlkit/robots/redisstore"
)

// crawlCeiling bounds a test's crawl; only a hang reaches it.
const crawlCeiling = 2 * time.Minute

// smallPlan is the demo's crawl made small enough for a test under -race
// on a loaded machine: the rates matter less here than what the frontier
// does with them.
func smallPlan() plan {
	p := demoPlan()
	p.fast, p.slow, p.span, p.workers = 12, 3, time.Second, 20
	return p
}

// wantPages is how many pages p's sites serve when every URL is fetched
// once, plus extra answers that are fetched again.
func wantPages(p plan, extra int) int {
	n := p.fast*max(int(p.span/p.fastDelay), 1) + p.slow*max(int(p.span/p.slowDelay), 1)
	return n + extra
}

func crawlWithin(t *testing.T, p plan) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), crawlCeiling)
	defer cancel()
	r, err := crawl(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d workers: %v", p.workers, r)
	return r
}

// TestFrontierWorkersNeverWaitForSlots checks that the frontier hands out
// a URL only when its origin is free: every page is fetched once, no
// origin is sent its pages faster than its delay allows, and no request waits for
// its slot inside RoundTrip or is offered twice.
func TestFrontierWorkersNeverWaitForSlots(t *testing.T) {
	for _, shuffled := range []bool{false, true} {
		p := smallPlan()
		p.shuffled = shuffled
		r := crawlWithin(t, p)
		if r.pages != wantPages(p, 0) {
			t.Errorf("shuffled=%v: %d pages served, want %d", shuffled, r.pages, wantPages(p, 0))
		}
		if r.outpaced != 0 {
			t.Errorf("shuffled=%v: %d origins sent pages faster than their delay allows", shuffled, r.outpaced)
		}
		if r.requeued != 0 {
			t.Errorf("shuffled=%v: %d URLs requeued, want none", shuffled, r.requeued)
		}
		// A slot is kept to the microsecond, the frontier's timers to the
		// nanosecond: a worker woken at the slot may find it a hair away.
		if r.waited > time.Duration(r.pages)*time.Millisecond {
			t.Errorf("shuffled=%v: requests waited %v in RoundTrip for %d pages", shuffled, r.waited, r.pages)
		}
	}
}

// TestFrontierHoldsAPausedOrigin checks that a 503 with Retry-After holds
// its origin's URLs in the frontier, not in RoundTrip: the page answered
// 503 is offered once more, after the pause, and nothing reaches the origin
// during it.
func TestFrontierHoldsAPausedOrigin(t *testing.T) {
	p := smallPlan()
	p.pause = true
	r := crawlWithin(t, p)
	if r.pages != wantPages(p, 1) {
		t.Errorf("%d pages served, want %d (the 503 fetched again)", r.pages, wantPages(p, 1))
	}
	if r.requeued != 1 {
		t.Errorf("%d URLs requeued, want the one answered 503", r.requeued)
	}
	if r.outpaced != 0 {
		t.Errorf("%d origins sent pages faster than their delay allows", r.outpaced)
	}
	if r.waited > time.Duration(r.pages)*time.Millisecond {
		t.Errorf("requests waited %v in RoundTrip for %d pages", r.waited, r.pages)
	}
}

// TestFrontierFleet crawls with two transports sharing one redisstore,
// each with its own frontier and half of every origin's URLs: the origins
// see the fleet's pace, every page is fetched once, and a URL is requeued
// only when the other transport took its slot first, never in a loop.
// Both frontiers see each slot free, so each slot has a winner and may
// have a loser, whose URL waits for the next: about one requeue a page
// (a frontier that retried without waiting for the slot named would make
// hundreds), so two a page is the bound.
func TestFrontierFleet(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	defer rc.Close()
	p := smallPlan()
	p.transports, p.store = 2, redisstore.New(rc, redisstore.Options{Prefix: t.Name()})
	r := crawlWithin(t, p)
	if r.pages != wantPages(p, 0) {
		t.Errorf("%d pages served, want %d", r.pages, wantPages(p, 0))
	}
	if r.outpaced != 0 {
		t.Errorf("%d origins sent pages faster than their delay allows", r.outpaced)
	}
	if r.requeued > 2*int64(r.pages) {
		t.Errorf("%d URLs requeued for %d pages: the frontiers spin", r.requeued, r.pages)
	}
}

// TestDemo runs the command as the README does, on a small crawl.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), crawlCeiling)
	defer cancel()
	if err := run(ctx, []string{"-workers", "10", "-span", "500ms"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"frontier", "worker pool", "of the politeness limit"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if err := run(ctx, []string{"-workers", "0"}, &stdout, &stderr); err == nil {
		t.Error("-workers 0 accepted")
	}
}
