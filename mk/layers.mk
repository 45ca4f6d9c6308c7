# The include graph against ARCHITECTURE.md's layer table (test/build/layers.py): every
# folder include declared there and every arrow there used, no cycle between folders or
# between modules; then the same checks on small trees with one fault injected each,
# which must all be found.  Needs no build; a second or two.
.PHONY: test-layers
test-layers:
	@rc=0; /usr/bin/python3 $(TOP)/test/build/layers.py || rc=1; \
		/usr/bin/python3 $(TOP)/test/build/layers.py --self-test || rc=1; exit $$rc

TEST_STAGES += test-layers
