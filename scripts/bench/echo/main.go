// Command echo is the floor `make bench` measures the sidecar against: the
// least a line-framed stdio peer can do. It reads '\n'-terminated lines
// from stdin and, per line, writes the line back (default) or, with -len,
// only the line's length in bytes. It never parses JSON, so what it costs
// is the pipe, the scheduler and the newline scan.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	lenOnly := flag.Bool("len", false, "reply with each line's length instead of the line")
	flag.Parse()
	if err := run(os.Stdin, os.Stdout, *lenOnly); err != nil {
		fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}

// run serves lines until EOF on in. It buffers at most one read buffer of
// a line: echoed lines are written through as they arrive.
func run(in io.Reader, out io.Writer, lenOnly bool) error {
	r := bufio.NewReaderSize(in, 64<<10)
	w := bufio.NewWriterSize(out, 64<<10)
	var n int
	var num []byte
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if !lenOnly && len(chunk) > 0 {
			if _, werr := w.Write(chunk); werr != nil {
				return werr
			}
		}
		switch {
		case err == nil:
			if lenOnly {
				num = strconv.AppendInt(num[:0], int64(n-1), 10)
				num = append(num, '\n')
				if _, werr := w.Write(num); werr != nil {
					return werr
				}
			}
			if werr := w.Flush(); werr != nil {
				return werr
			}
			n = 0
		case errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			return w.Flush()
		default:
			return err
		}
	}
}
