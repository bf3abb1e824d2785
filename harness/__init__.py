"""Host-side harness: set up, build, boot and test the patched kernel."""
