// porcupine-check: Porcupine's verdict on register histories, for causim-checkers' cross-check
// (checkers/tests/porcupine.rs builds and runs it).
//
// Input (a file named as the only argument, or standard input): histories one after another,
// each starting with a line `# history NAME`, then one operation per line:
//
//	KEY w VALUE INVOKE COMPLETE    a write of VALUE (a positive integer)
//	KEY r VALUE INVOKE COMPLETE    a read that returned VALUE (0: the initial value)
//
// INVOKE and COMPLETE are integer times; COMPLETE `inf` marks a write whose outcome is unknown
// (it may take effect at any time after INVOKE, or never). Keys are words.
//
// Output: one line per history, `NAME ok`, `NAME illegal` or `NAME unknown` (timed out).
//
// The model is a map of independent registers, partitioned by key: Porcupine checks each key on
// its own, as the causim checker does.
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

type registerInput struct {
	key   string
	write bool
	value int64
}

var registers = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		index := map[string]int{}
		var parts [][]porcupine.Operation
		for _, op := range history {
			key := op.Input.(registerInput).key
			i, seen := index[key]
			if !seen {
				i = len(parts)
				index[key] = i
				parts = append(parts, nil)
			}
			parts[i] = append(parts[i], op)
		}
		return parts
	},
	Init: func() interface{} { return int64(0) },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		in := input.(registerInput)
		if in.write {
			return true, in.value
		}
		return output.(int64) == state.(int64), state
	},
	Equal: func(a, b interface{}) bool { return a.(int64) == b.(int64) },
}

type history struct {
	name string
	ops  []porcupine.Operation
}

func parse(r io.Reader) ([]history, error) {
	var out []history
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for scanner.Scan() {
		line++
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "# history ") {
			out = append(out, history{name: strings.TrimPrefix(text, "# history ")})
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("line %d: an operation before the first `# history` line", line)
		}
		f := strings.Fields(text)
		if len(f) != 5 || (f[1] != "r" && f[1] != "w") {
			return nil, fmt.Errorf("line %d: expected `KEY r|w VALUE INVOKE COMPLETE`, found %q", line, text)
		}
		value, err1 := strconv.ParseInt(f[2], 10, 64)
		invoke, err2 := strconv.ParseInt(f[3], 10, 64)
		complete := int64(math.MaxInt64)
		var err3 error
		if f[4] != "inf" {
			complete, err3 = strconv.ParseInt(f[4], 10, 64)
		}
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("line %d: bad number in %q", line, text)
		}
		h := &out[len(out)-1]
		h.ops = append(h.ops, porcupine.Operation{
			ClientId: len(h.ops),
			Input:    registerInput{key: f[0], write: f[1] == "w", value: value},
			Call:     invoke,
			Output:   value,
			Return:   complete,
		})
	}
	return out, scanner.Err()
}

func main() {
	in := io.Reader(os.Stdin)
	if len(os.Args) == 2 {
		file, err := os.Open(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "porcupine-check:", err)
			os.Exit(2)
		}
		defer file.Close()
		in = file
	}
	histories, err := parse(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "porcupine-check:", err)
		os.Exit(2)
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, h := range histories {
		verdict := "unknown"
		switch porcupine.CheckOperationsTimeout(registers, h.ops, 60*time.Second) {
		case porcupine.Ok:
			verdict = "ok"
		case porcupine.Illegal:
			verdict = "illegal"
		}
		fmt.Fprintf(out, "%s %s\n", h.name, verdict)
	}
}
