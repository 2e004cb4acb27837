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

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/tsdb"
)

// store is a TSDB in a temporary directory holding a recording's samples.
type store struct {
	db  *tsdb.DB
	dir string
}

// load appends every scrape's samples to a new TSDB at the scrape's time,
// with the staleness markers Prometheus's scraper writes for a series that
// a scrape no longer has.
func load(ctx context.Context, scrapes []scrape) (*store, error) {
	dir, err := os.MkdirTemp("", "dashboardpng-tsdb-")
	if err != nil {
		return nil, fmt.Errorf("cannot create the TSDB's directory: %w", err)
	}
	db, err := tsdb.Open(dir, nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot open a TSDB: %w", err)
	}
	s := &store{db: db, dir: dir}
	prev := map[uint64]labels.Labels{}
	for _, sc := range scrapes {
		seen, err := s.append(ctx, sc, prev)
		if err != nil {
			_ = s.close()
			return nil, err
		}
		prev = seen
	}
	return s, nil
}

// append adds one scrape, and a staleness marker for each series of prev
// the scrape lacks; it returns the scrape's series.
func (s *store) append(ctx context.Context, sc scrape, prev map[uint64]labels.Labels) (map[uint64]labels.Labels, error) {
	app := s.db.Appender(ctx)
	t := sc.at.UnixMilli()
	seen := map[uint64]labels.Labels{}
	p := textparse.NewPromParser(sc.text, labels.NewSymbolTable(), false)
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = app.Rollback()
			return nil, fmt.Errorf("cannot parse the scrape at %s: %w", sc.at.UTC().Format(time.RFC3339), err)
		}
		if entry != textparse.EntrySeries {
			continue
		}
		var l labels.Labels
		p.Labels(&l)
		_, _, v := p.Series()
		if _, err := app.Append(0, l, t, v); err != nil {
			_ = app.Rollback()
			return nil, fmt.Errorf("cannot store %s: %w", l, err)
		}
		seen[l.Hash()] = l
	}
	for h, l := range prev {
		if _, ok := seen[h]; ok {
			continue
		}
		if _, err := app.Append(0, l, t, math.Float64frombits(value.StaleNaN)); err != nil {
			_ = app.Rollback()
			return nil, fmt.Errorf("cannot mark %s stale: %w", l, err)
		}
	}
	if err := app.Commit(); err != nil {
		return nil, fmt.Errorf("cannot commit the scrape at %s: %w", sc.at.UTC().Format(time.RFC3339), err)
	}
	return seen, nil
}

func (s *store) close() error {
	err := s.db.Close()
	if rmErr := os.RemoveAll(s.dir); err == nil {
		err = rmErr
	}
	return err
}

// scrapeInterval is the median time between the recording's scrapes.
func scrapeInterval(scrapes []scrape) time.Duration {
	gaps := make([]time.Duration, 0, len(scrapes)-1)
	for i := 1; i < len(scrapes); i++ {
		gaps = append(gaps, scrapes[i].at.Sub(scrapes[i-1].at))
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}
