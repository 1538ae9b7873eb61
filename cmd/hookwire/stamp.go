package main

import (
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"unicode/utf8"
)

// stampedVersion reads main.version from the symbol table of the Go
// binary at path: the value make's -X main.version=V gave it. The build
// info has it only as part of -ldflags, which Go leaves out under
// -trimpath (golang/go#52372), and make builds with -trimpath (the
// Makefile's GOFLAGS). "" when the variable is empty, the binary has no
// symbols (-s, as the release builds are), is not 64-bit, or is not ELF,
// Mach-O or PE.
func stampedVersion(path string) string {
	f, err := openRegularFile(path) // a FIFO at the binary's path must not hang doctor
	if err != nil {
		return ""
	}
	defer f.Close()
	type section struct {
		addr, size uint64
		readAt     func([]byte, int64) (int, error)
	}
	var (
		order    binary.ByteOrder
		addr     uint64
		sections []section
	)
	if e, err := elf.NewFile(f); err == nil {
		if e.Class != elf.ELFCLASS64 {
			return ""
		}
		syms, _ := e.Symbols()
		for _, s := range syms {
			if s.Name == "main.version" {
				addr = s.Value
			}
		}
		order = e.ByteOrder
		for _, s := range e.Sections {
			if s.Type != elf.SHT_NOBITS && s.Flags&elf.SHF_ALLOC != 0 && s.Flags&elf.SHF_COMPRESSED == 0 && s.Size > 0 {
				sections = append(sections, section{s.Addr, s.Size, s.ReadAt})
			}
		}
	} else if m, err := macho.NewFile(f); err == nil {
		if m.Magic != macho.Magic64 || m.Symtab == nil {
			return ""
		}
		for _, s := range m.Symtab.Syms {
			if s.Name == "main.version" || s.Name == "_main.version" {
				addr = s.Value
			}
		}
		order = m.ByteOrder
		for _, s := range m.Sections {
			if s.Flags&0xff != 1 && s.Size > 0 { // not S_ZEROFILL
				sections = append(sections, section{s.Addr, s.Size, s.ReadAt})
			}
		}
	} else if p, err := pe.NewFile(f); err == nil {
		oh, ok := p.OptionalHeader.(*pe.OptionalHeader64)
		if !ok {
			return ""
		}
		for _, s := range p.Symbols {
			if s.Name == "main.version" && s.SectionNumber > 0 && int(s.SectionNumber) <= len(p.Sections) {
				addr = oh.ImageBase + uint64(p.Sections[s.SectionNumber-1].VirtualAddress) + uint64(s.Value)
			}
		}
		order = binary.LittleEndian
		for _, s := range p.Sections {
			if s.Size == 0 {
				continue
			}
			sections = append(sections, section{oh.ImageBase + uint64(s.VirtualAddress), uint64(min(s.Size, s.VirtualSize)), s.ReadAt})
		}
	} else {
		return ""
	}
	// read fills b from the image at virtual address a.
	read := func(a uint64, b []byte) bool {
		for _, s := range sections {
			if a >= s.addr && a-s.addr+uint64(len(b)) <= s.size {
				_, err := s.readAt(b, int64(a-s.addr))
				return err == nil
			}
		}
		return false
	}
	// A string variable is its data's address and its length.
	header := make([]byte, 16)
	if addr == 0 || !read(addr, header) {
		return ""
	}
	data, n := order.Uint64(header), order.Uint64(header[8:])
	if n == 0 || n > 256 {
		return ""
	}
	v := make([]byte, n)
	if !read(data, v) || !utf8.Valid(v) {
		return ""
	}
	for _, r := range string(v) {
		if r <= ' ' || r == 0x7f {
			return ""
		}
	}
	return string(v)
}
