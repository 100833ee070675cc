"""The turn machinery: one turn streamed and projected to events, its interrupts answered,
its cards, its queue, its cancel and repair."""
