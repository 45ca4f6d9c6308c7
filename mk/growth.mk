# Every growing array through src/common/grow.h (test/build/growth.py): no realloc outside
# grow.c, no open-coded `cap ? cap * 2 : N`; then the checker on small trees with one
# fault injected each, which must all be found.  Needs no build; well under a second.
.PHONY: test-growth
test-growth:
	@rc=0; /usr/bin/python3 $(TOP)/test/build/growth.py || rc=1; \
		/usr/bin/python3 $(TOP)/test/build/growth.py --self-test || rc=1; exit $$rc

TEST_STAGES += test-growth
