//go:build !race

package sessiondb

const storeRaceBuild = false
