/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package docs holds the provider's documentation; its test checks that every
// relative link in README.md and docs/**/*.md resolves.
package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
	// GitHub's heading anchors keep letters, digits, '-', '_' and spaces (which
	// become '-'); everything else is dropped.
	anchorDropRE = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// pages are README.md and every Markdown file under docs/, relative to the
// repository root.
func pages(t *testing.T, root string) []string {
	t.Helper()
	out := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		out = append(out, rel)
		return err
	})
	if err != nil {
		t.Fatalf("cannot list docs: %v", err)
	}
	return out
}

// links are the link targets of a Markdown page outside fenced code blocks and
// code spans.
func links(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// anchors are the heading anchors GitHub gives a page, duplicates numbered.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := strings.ReplaceAll(anchorDropRE.ReplaceAllString(strings.ToLower(title), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func isExternal(target string) bool {
	for _, p := range []string{"http://", "https://", "mailto:"} {
		if strings.HasPrefix(target, p) {
			return true
		}
	}
	return false
}

// TestRelativeLinksResolve fails on a relative link whose file is missing, or
// whose anchor names no heading of a Markdown page.
func TestRelativeLinksResolve(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, page := range pages(t, root) {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatalf("cannot read %s: %v", page, err)
		}
		for _, target := range links(string(b)) {
			if isExternal(target) {
				continue
			}
			checked++
			if err := resolve(root, page, string(b), target); err != nil {
				t.Errorf("%s: link %q: %v", page, target, err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found: the page walk is broken")
	}
}

// resolve checks one link target of page (whose text is self).
func resolve(root, page, self, target string) error {
	file, anchor, _ := strings.Cut(target, "#")
	text := self
	if file != "" {
		path := filepath.Join(root, filepath.Dir(page), filepath.FromSlash(file))
		if !strings.HasPrefix(path, root+string(filepath.Separator)) && path != root {
			return fmt.Errorf("points outside the repository")
		}
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("no such file or directory %s", filepath.ToSlash(strings.TrimPrefix(path, root+"/")))
		}
		if anchor == "" || !strings.HasSuffix(file, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text = string(b)
	}
	if anchor != "" && !anchors(text)[anchor] {
		return fmt.Errorf("no heading with anchor #%s", anchor)
	}
	return nil
}
