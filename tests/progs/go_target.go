// A Go target for tests/integration/uprobe/go.t: work(n, s) is called every
// 10 ms with n counting up from 1 and s one of three known words, and each
// call prints a line, so a test sees both the probed values and that the
// program is still alive after a probe fired. Build: go build -o go_target.
package main

import (
	"fmt"
	"os"
	"time"
)

var words = []string{"alpha", "beta", "gamma"}

// work returns n*2 + len(s); kept out of line so that a probe has a body
// (with RET instructions) to attach to.
//
//go:noinline
func work(n int, s string) int {
	if n%7 == 0 {
		return n*2 + len(s) // a second way out: another RET
	}
	return n*2 + len(s)
}

// measure takes a pointer to a string header: gostr(HDR) reads it.
//
//go:noinline
func measure(p *string) int {
	return len(*p)
}

func main() {
	for n := 1; ; n++ {
		r := work(n, words[n%len(words)])
		fmt.Fprintf(os.Stdout, "call %d %s -> %d %d\n", n, words[n%len(words)], r,
			measure(&words[n%len(words)]))
		time.Sleep(10 * time.Millisecond)
	}
}
