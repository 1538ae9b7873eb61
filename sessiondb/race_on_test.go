//go:build race

package sessiondb

// storeRaceBuild: built with -race, under which SQLite (transpiled C) runs
// some 25 times slower; the largest fault tests then use smaller figures.
const storeRaceBuild = true
