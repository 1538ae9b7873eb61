package racetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// fakeT records what Volume does with a test of a given name.
type fakeT struct {
	testing.TB
	name           string
	fatal, skipped bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Name() string          { return f.name }
func (f *fakeT) Fatalf(string, ...any) { f.fatal = true }
func (f *fakeT) Skipf(string, ...any)  { f.skipped = true }

func TestVolume(t *testing.T) {
	for _, tc := range []struct {
		name        string
		fatal, skip bool
	}{
		{"TestVolumeBig", false, Enabled},
		{"TestVolumeBig/sub", false, Enabled},
		{"TestBig", true, false},
		{"BenchmarkVolume", true, false},
	} {
		f := &fakeT{name: tc.name}
		Volume(f)
		assert.Equal(t, tc.fatal, f.fatal, "%s: failed", tc.name)
		assert.Equal(t, tc.skip, f.skipped, "%s: skipped (race build %v)", tc.name, Enabled)
	}
}
