package queue

import "testing"

// TestBus_Listening: Listening follows subscriptions as they start and
// end, so publishers that skip unheard events skip only those.
func TestBus_Listening(t *testing.T) {
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
