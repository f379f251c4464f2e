// Package proctest starts, for tests, a command as a child process that
// dies with the process that started it. A test that starts servers
// (hnssim) and is killed, by a timeout or by the fuzzing engine stopping a
// worker mid-input, runs no cleanup; an orphaned child would keep running
// and keep the killed process's inherited descriptors open: Go's fuzzing
// coordinator then waits forever on its worker's pipe, which the orphan
// holds.
package proctest
