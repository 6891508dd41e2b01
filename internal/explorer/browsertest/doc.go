// Package browsertest drives the explorer page in Debian's Chromium
// through chromedp: a module of its own, so that the library's module
// graph holds no chromedp.
package browsertest
