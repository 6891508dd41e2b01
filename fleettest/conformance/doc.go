// Package conformance runs package fleettest from a module of its own, as
// a store written outside this repository would: it imports fleettest by
// its path and checks redisstore against it on a redis-server that its
// test starts itself, since internal/redistest is out of its reach.
package conformance
