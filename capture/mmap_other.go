//go:build !unix

package capture

import "os"

func mapFile(*os.File) ([]byte, bool) { return nil, false }

func unmapFile([]byte) error { return nil }

func releaseMapped([]byte) {}
