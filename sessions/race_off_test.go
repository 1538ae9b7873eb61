//go:build !race

package sessions

const storeRaceBuild = false
