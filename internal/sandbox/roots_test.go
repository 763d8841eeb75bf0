package sandbox

import (
	"errors"
	"reflect"
	"testing"
)

func TestReadRoots(t *testing.T) {
	tree := map[string][]string{
		"/":                  {"bin", "home", "tmp", "usr", "link-up", "link-ok"},
		"/home":              {"u", "v"},
		"/home/u":            {".config", ".cache", "proj"},
		"/home/u/.config":    {"baton", "git"},
		"/home/u/.config/x/": {},
	}
	links := map[string]string{"/link-up": "/home/u", "/link-ok": "/usr/share", "/home/u/proj": "/home/u/proj"}
	list := func(d string) ([]string, error) {
		if n, ok := tree[d]; ok {
			return n, nil
		}
		return nil, errors.New("not a directory")
	}
	resolve := func(p string) (string, error) {
		if l, ok := links[p]; ok {
			return l, nil
		}
		return p, nil
	}
	for _, tc := range []struct {
		name string
		root string
		deny []string
		want []string
	}{
		{"nothing denied", "/", nil, []string{"/"}},
		{"root denied", "/", []string{"/"}, nil},
		{"key dir and project", "/", []string{"/home/u/.config/baton", "/home/u/proj"},
			[]string{"/bin", "/home/u/.cache", "/home/u/.config/git", "/home/v", "/link-ok", "/tmp", "/usr"}},
		{"denied outside root", "/home", []string{"/tmp"}, []string{"/home"}},
		{"unclean deny", "/", []string{"/home/u/.config/baton/", "/home/u/./proj"},
			[]string{"/bin", "/home/u/.cache", "/home/u/.config/git", "/home/v", "/link-ok", "/tmp", "/usr"}},
		{"within a root", "/home/u", []string{"/home/u/.config"}, []string{"/home/u/.cache", "/home/u/proj"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readRoots(tc.root, tc.deny, list, resolve)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("readRoots(%q, %q) = %q, want %q", tc.root, tc.deny, got, tc.want)
			}
		})
	}
}
