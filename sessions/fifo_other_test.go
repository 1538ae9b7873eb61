//go:build !unix

package sessions

import "errors"

func mkfifo(string) error { return errors.ErrUnsupported }
