//go:build !unix

package sessiondb

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
