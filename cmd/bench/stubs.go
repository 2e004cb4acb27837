package main

import "context"

func soak(context.Context, settings, int, int, int64) error { return nil }
