package queue

import "testing"

// TestBus_Listening: Listening follows subscriptions as they start and
// end, so publishers that skip unheard events skip only those.
func TestBus_Listening(t *testing.T) {
	t.Parallel()
	b := NewBus()
	if b.Listening() {
		t.Fatal("a new bus is listening")
	}
	ch1, stop1 := b.Subscribe(1, nil)
	_, stop2 := b.Subscribe(1, nil)
	if !b.Listening() {
		t.Fatal("not listening with two subscribers")
	}
	stop2()
	stop2() // a second stop does nothing
	if !b.Listening() {
		t.Fatal("not listening with one subscriber left")
	}
	b.Publish(Event{Type: EventStarted})
	if e := <-ch1; e.Type != EventStarted {
		t.Fatalf("got %v, want the started event", e)
	}
	stop1()
	if b.Listening() {
		t.Fatal("listening after every subscription ended")
	}
}

// TestBus_ListeningTo: a subscription to named types receives only those,
// and ListeningTo tells publishers which types someone would receive.
func TestBus_ListeningTo(t *testing.T) {
	t.Parallel()
	b := NewBus()
	typed, stopTyped := b.Subscribe(4, nil, EventCompleted, EventFailed)
	if !b.ListeningTo(EventCompleted) || !b.ListeningTo(EventFailed) {
		t.Fatal("not listening to the types subscribed to")
	}
	if b.ListeningTo(EventStarted) {
		t.Fatal("listening to started with only completed and failed subscribed to")
	}
	b.Publish(Event{Type: EventStarted})
	b.Publish(Event{Type: EventFailed})
	if e := <-typed; e.Type != EventFailed {
		t.Fatalf("typed subscription got %v, want the failed event only", e.Type)
	}
	all, stopAll := b.Subscribe(4, nil)
	if !b.ListeningTo(EventStarted) {
		t.Fatal("not listening to started with a subscription to every type")
	}
	b.Publish(Event{Type: EventStarted})
	if e := <-all; e.Type != EventStarted {
		t.Fatalf("subscription to every type got %v, want started", e.Type)
	}
	select {
	case e := <-typed:
		t.Fatalf("typed subscription got %v, which it did not subscribe to", e.Type)
	default:
	}
	stopAll()
	stopTyped()
	if b.ListeningTo(EventCompleted) || b.Listening() {
		t.Fatal("listening after every subscription ended")
	}
}
