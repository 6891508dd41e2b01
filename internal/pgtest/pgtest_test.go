package pgtest

import (
	"net"
	"testing"
	"time"
)

func TestStartAnswersAndRemoves(t *testing.T) {
	s := Start(t)
	c, err := net.DialTimeout("tcp", s.URL[len("postgres://robots@"):len(s.URL)-len("/postgres?sslmode=disable")], 10*time.Second)
	if err != nil {
		t.Fatalf("the server does not answer at %s: %v", s.URL, err)
	}
	c.Close()
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
}
