//go:build !unix

package main

// privateFiles: Windows has no umask; Listen's chmod and the directory's ACL apply.
func privateFiles() {}
