// Package contract is the protocol's surface as data: the methods and
// their kinds, the OpenCode hook each hook method forwards, the event
// types the sidecar wants, the error codes, the members of a transform's
// messages the sidecar reads, each method's params and result, and the
// npm package names. One file, contract.json, defines them;
// contract_gen.go (this package), the shim's src/contract.gen.ts and
// handlers/protocol_gen.go (the params types, the typed handler
// interface and the routes) are generated from it by ./gen, and tests
// check the shim's test fakes and docs/PROTOCOL.md's tables against it.
//
// It holds names and numbers only: no behaviour (that is PROTOCOL.md's and
// the handlers'), and it imports nothing of hookwire, so every package,
// rpc included, may import it.
//
// Adding a hook: its entry in contract.json, `go generate ./contract`,
// one handler file in handlers/, its tests and its docs; README.md beside
// this file has the steps.
package contract

//go:generate go run ./gen -root ..
