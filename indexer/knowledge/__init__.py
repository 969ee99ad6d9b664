"""Knowledge the index holds beyond the terminologies' own labels: designations that say where they came from."""
