package rpc

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDetectFraming(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    Framing
		wantErr error
		next    byte // the byte left to read
	}{
		{"Content-Length header", "Content-Length: 2\r\n\r\n{}", FramingHeader, nil, 'C'},
		{"lower-case header", "content-length: 2\r\n\r\n{}", FramingHeader, nil, 'c'},
		{"object", `{"jsonrpc":"2.0"}`, FramingLine, nil, '{'},
		{"array", `[1]`, FramingLine, nil, '['},
		{"blank lines first", " \r\n\t\n{}", FramingLine, nil, '{'},
		{"blank lines before a header", "\r\n\r\nContent-Length: 2", FramingHeader, nil, 'C'},
		{"garbage is line framing", "hello", FramingLine, nil, 'h'},
		{"empty", "", FramingAuto, io.EOF, 0},
		{"only blanks", " \n\r\n\t", FramingAuto, io.EOF, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tt.input))
			got, err := detectFraming(r)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, tt.want, got)
			if tt.wantErr == nil {
				b, err := r.ReadByte()
				require.NoError(t, err)
				assert.Equal(t, tt.next, b, "first non-blank byte left unread")
			}
		})
	}
}

func TestParseFraming(t *testing.T) {
	for in, want := range map[string]Framing{"": FramingAuto, "auto": FramingAuto, "header": FramingHeader, "LINE": FramingLine} {
		got, err := ParseFraming(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
		if in != "" {
			assert.Equal(t, strings.ToLower(in), got.String())
		}
	}
	_, err := ParseFraming("lsp")
	assert.Error(t, err)
}

// frameResult is a frame as a test compares it.
type frameResult struct {
	data     string
	tooLarge bool
	prefix   string
	err      bool
}

func readAll(t *testing.T, f framer, limit int64) []frameResult {
	t.Helper()
	var got []frameResult
	for {
		fr, err := f.ReadFrame(limit)
		if err == io.EOF {
			return got
		}
		require.NoError(t, err)
		got = append(got, frameResult{data: string(fr.data), tooLarge: fr.tooLarge, prefix: string(fr.prefix), err: fr.err != nil})
	}
}

// smallReader returns at most n bytes per Read, to cross chunk boundaries.
type smallReader struct {
	r io.Reader
	n int
}

func (s smallReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

func TestLineFramer(t *testing.T) {
	long := strings.Repeat("a", 100)
	tests := []struct {
		name  string
		input string
		limit int64
		want  []frameResult
	}{
		{"lines", "{}\n[1]\n", 100, []frameResult{{data: "{}"}, {data: "[1]"}}},
		{"CRLF", "{}\r\n[1]\r\n", 100, []frameResult{{data: "{}"}, {data: "[1]"}}},
		{"blank lines skipped", "\n\r\n  \n{}\n\t\n", 100, []frameResult{{data: "{}"}}},
		{"last line without newline", "{}\n[2]", 100, []frameResult{{data: "{}"}, {data: "[2]"}}},
		{"at the limit", long + "\n", 100, []frameResult{{data: long}}},
		{"at the limit with CRLF", long + "\r\n", 100, []frameResult{{data: long}}},
		{"over the limit", long + "b\n{}\n", 100, []frameResult{{tooLarge: true, prefix: long + "b"}, {data: "{}"}}},
		{"over the limit at EOF", long + "b", 100, []frameResult{{tooLarge: true, prefix: long + "b"}}},
		{"prefix capped at 4 KiB", strings.Repeat("p", 70000) + "\n{}\n", 1000, []frameResult{{tooLarge: true, prefix: strings.Repeat("p", idPrefixBytes)}, {data: "{}"}}},
		{"over the limit by the CRLF's room", long + "bc\r\n{}\n", 100, []frameResult{{tooLarge: true, prefix: long + "bc"}, {data: "{}"}}},
		{"long lines in a row", long + "\n" + long + "x\n" + long + "\n", 101, []frameResult{{data: long}, {data: long + "x"}, {data: long}}},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 7, 1 << 20} {
			t.Run(fmt.Sprintf("%s/reads of %d", tt.name, chunk), func(t *testing.T) {
				r := bufio.NewReaderSize(smallReader{strings.NewReader(tt.input), chunk}, 16)
				assert.Equal(t, tt.want, readAll(t, &lineFramer{r: r}, tt.limit))
			})
		}
	}
}

func TestLineFramerDoesNotBufferOversize(t *testing.T) {
	// 50 MB over a 1 KiB limit: the framer holds at most the prefix and one read buffer.
	big := io.MultiReader(strings.NewReader(`{"id":7,"x":"`), io.LimitReader(repeatReader('z'), 50<<20), strings.NewReader("\"}\n{}\n"))
	f := &lineFramer{r: bufio.NewReaderSize(big, readBufferSize)}
	fr, err := f.ReadFrame(1024)
	require.NoError(t, err)
	require.True(t, fr.tooLarge)
	assert.Equal(t, int64(50<<20+len(`{"id":7,"x":"`)+3), fr.size)
	assert.LessOrEqual(t, cap(fr.prefix), idPrefixBytes)
	assert.Zero(t, f.hint, "an oversized line leaves no size hint")
	assert.Equal(t, []byte("7"), scanPrefixID(fr.prefix))
	fr, err = f.ReadFrame(1024)
	require.NoError(t, err)
	assert.Equal(t, "{}", string(fr.data))
}

type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func TestHeaderFramer(t *testing.T) {
	tests := []struct {
		name  string
		input string
		limit int64
		want  []frameResult
	}{
		{"one frame", "Content-Length: 2\r\n\r\n{}", 100, []frameResult{{data: "{}"}}},
		{"two frames back to back", "Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n[1]", 100, []frameResult{{data: "{}"}, {data: "[1]"}}},
		{"other headers ignored", "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\nX-Y: z\r\n\r\n{}", 100, []frameResult{{data: "{}"}}},
		{"name case and spacing", "CONTENT-LENGTH:2 \n\n{}", 100, []frameResult{{data: "{}"}}},
		{"blank lines between frames", "\r\n\r\nContent-Length: 2\r\n\r\n{}\r\n", 100, []frameResult{{data: "{}"}}},
		{"same length twice", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", 100, []frameResult{{data: "{}"}}},
		{"at the limit", "Content-Length: 100\r\n\r\n" + strings.Repeat("x", 100) + "Content-Length: 2\r\n\r\n{}", 100,
			[]frameResult{{data: strings.Repeat("x", 100)}, {data: "{}"}}},
		{"one byte over the limit", "Content-Length: 101\r\n\r\n" + strings.Repeat("x", 101) + "Content-Length: 2\r\n\r\n{}", 100,
			[]frameResult{{tooLarge: true, prefix: strings.Repeat("x", 101)}, {data: "{}"}}},
		{"oversize skipped", "Content-Length: 200\r\n\r\n" + strings.Repeat("x", 200) + "Content-Length: 2\r\n\r\n{}", 100,
			[]frameResult{{tooLarge: true, prefix: strings.Repeat("x", 200)}, {data: "{}"}}},
		{"bad length resyncs", "Content-Length: x\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}", 100, []frameResult{{err: true}, {data: "{}"}}},
		{"missing length resyncs", "Content-Type: a\r\n\r\n{\"a\":1}\ncontent-length: 2\r\n\r\n{}", 100, []frameResult{{err: true}, {data: "{}"}}},
		{"resync across a near match", "Content-Length: -1\r\n\r\nContent-Lengt Content-Length: 2\r\n\r\n{}", 100, []frameResult{{err: true}, {data: "{}"}}},
		{"junk line", "{\"a\":1}\r\nContent-Length: 2\r\n\r\n{}", 100, []frameResult{{err: true}, {data: "{}"}}},
		{"junk glued to a header", "xx}Content-Length: 2\r\n\r\n{}", 100, []frameResult{{err: true}, {data: "{}"}}},
		{"header line too long", "X: " + strings.Repeat("h", 3*maxHeaderLine) + "\r\nContent-Length: 2\r\n\r\n{}", 100, []frameResult{{err: true}, {data: "{}"}}},
		{"EOF in headers", "Content-Length: 2\r\n", 100, []frameResult{{err: true}}},
		{"EOF while resynchronising", "Content-Length: x\r\n\r\n{\"a\":1}", 100, []frameResult{{err: true}}},
		{"EOF in a long header line", "X: " + strings.Repeat("h", 3*maxHeaderLine), 100, []frameResult{{err: true}}},
		{"EOF in body", "Content-Length: 20\r\n\r\n{}", 100, []frameResult{{err: true}}},
		{"EOF in oversize body", "Content-Length: 200\r\n\r\nabc", 100, []frameResult{{tooLarge: true, prefix: "abc"}}},
		{"huge length: body not waited for, resyncs", "Content-Length: 9223372036854775807\r\n\r\n{\"id\":1}Content-Length: 2\r\n\r\n{}", 100,
			[]frameResult{{tooLarge: true}, {data: "{}"}}},
		{"just over the skip bound resyncs", fmt.Sprintf("Content-Length: %d\r\n\r\n{}Content-Length: 2\r\n\r\n[]", maxSkipBytes+1), 100,
			[]frameResult{{tooLarge: true}, {data: "[]"}}},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 5, 1 << 20} {
			t.Run(fmt.Sprintf("%s/reads of %d", tt.name, chunk), func(t *testing.T) {
				r := bufio.NewReaderSize(smallReader{strings.NewReader(tt.input), chunk}, 16)
				assert.Equal(t, tt.want, readAll(t, &headerFramer{r: r}, tt.limit))
			})
		}
	}
}

func TestWriteFrame(t *testing.T) {
	tests := []struct {
		name string
		f    framer
		want string
	}{
		{"line", &lineFramer{}, `{"id":1}` + "\n"},
		{"header", &headerFramer{}, "Content-Length: 8\r\n\r\n" + `{"id":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			w := bufio.NewWriter(&b)
			require.NoError(t, tt.f.WriteFrame(w, []byte(`{"id":`), []byte("1"), []byte("}")))
			require.NoError(t, w.Flush())
			assert.Equal(t, tt.want, b.String())
		})
	}
}

// A run of messages longer than the read buffer is read into one buffer:
// after the first, reading one allocates nothing.
func TestFramersReuseTheirBuffer(t *testing.T) {
	body := `{"jsonrpc":"2.0","method":"m","params":"` + strings.Repeat("a", 200) + `"}`
	for _, framing := range []Framing{FramingLine, FramingHeader} {
		t.Run(framing.String(), func(t *testing.T) {
			msg := body + "\n"
			if framing == FramingHeader {
				msg = fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
			}
			f := newFramer(framing, bufio.NewReaderSize(&loopReader{line: []byte(strings.TrimSuffix(msg, "\n"))}, 16))
			if framing == FramingHeader {
				f = newFramer(framing, bufio.NewReaderSize(&repeatString{s: msg}, 16))
			}
			read := func() frame {
				fr, err := f.ReadFrame(1 << 20)
				require.NoError(t, err)
				return fr
			}
			first := read()
			require.Equal(t, body, string(first.data))
			for range 3 {
				fr := read()
				require.Equal(t, body, string(fr.data))
				assert.Same(t, &first.data[0], &fr.data[0], "the same buffer")
			}
			if framing == FramingLine {
				assert.Zero(t, testing.AllocsPerRun(10, func() { read() }))
			}
		})
	}
}

// repeatString returns s over and over.
type repeatString struct {
	s   string
	off int
}

func (r *repeatString) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	return n, nil
}
