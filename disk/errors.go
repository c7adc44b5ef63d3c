package disk

import (
	"errors"
	"fmt"
	"syscall"

	"sluice/core"
)

// mapError makes out-of-space errors recognizable to core: ENOSPC (the
// filesystem is full) and EDQUOT (the user's quota is) both wrap
// core.ErrDiskFull, keeping the OS error too. Everything else passes as is;
// os errors for missing names already match fs.ErrNotExist.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", core.ErrDiskFull, err)
	}
	return err
}
