package seeddb

import (
	"os"
	"strconv"
	"testing"
)

// TestSeedFile makes the database HOOKWIRE_SEED_PATH names with
// HOOKWIRE_SEED_PARENTS parents (for measuring the commands by hand);
// skipped unless both are set.
func TestSeedFile(t *testing.T) {
	path, n := os.Getenv("HOOKWIRE_SEED_PATH"), os.Getenv("HOOKWIRE_SEED_PARENTS")
	if path == "" || n == "" {
		t.Skip("HOOKWIRE_SEED_PATH and HOOKWIRE_SEED_PARENTS not set")
	}
	parents, err := strconv.Atoi(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := Seed(path, parents); err != nil {
		t.Fatal(err)
	}
}
