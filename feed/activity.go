package feed

// Watch returns a channel that receives a signal soon after a job of the
// feed's queue changes, whichever tenant it belongs to: at once for a
// change made in this process (the client's event bus), and for one made
// elsewhere when its cross-process hint arrives. A signal may stand for
// many changes and carries none of them: a watcher reads what it shows
// again (the operator console's stream reads the queue's health). Changes
// that publish nothing (a scheduled job falling due) send no signal, so a
// watcher also reads at an interval of its own. The channel is closed when
// stop is called or when Run returns; stop may be called more than once.
func (f *Feed) Watch() (signals <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if f.watchersClosed {
		close(ch)
		return ch, func() {}
	}
	if f.watchers == nil {
		f.watchers = make(map[chan struct{}]struct{})
	}
	f.watchers[ch] = struct{}{}
	return ch, func() {
		f.wmu.Lock()
		defer f.wmu.Unlock()
		if _, ok := f.watchers[ch]; ok {
			delete(f.watchers, ch)
			close(ch)
		}
	}
}

// signalWatchers tells every watcher that the queue changed, never
// blocking: a signal already pending covers this one.
func (f *Feed) signalWatchers() {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	for ch := range f.watchers {
		poke(ch)
	}
}

// closeWatchers closes every watcher's channel; later Watch calls get a
// closed channel.
func (f *Feed) closeWatchers() {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.watchersClosed = true
	for ch := range f.watchers {
		close(ch)
	}
	clear(f.watchers)
}
