//go:build unix

package sessiondb

import (
	"errors"
	"syscall"
)

// oNoFollow makes an open fail on a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

func isReadOnlyFS(err error) bool { return errors.Is(err, syscall.EROFS) }
