# Set-up, build and test. `make test` is what CI runs; `make demo` shows the library at work.
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
APT_PACKAGES :=

.PHONY: all setup build test demo clean

all: build

# Installs the Debian packages the project needs and a fresh machine lacks; does nothing when
# they are all present. (apt here can fail once with "cannot access archive": retry once.)
setup:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing:$$missing"; \
		apt-get update -qq && \
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing || \
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; }; \
	fi

build: setup
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

test: setup
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	$(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS)

demo: setup
	$(SWIFT) build --product resourceful $(SWIFT_BUILD_FLAGS)
	$(SWIFT) run --skip-build resourceful demo

clean:
	rm -rf .build
