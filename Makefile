# Set-up, build and test. `make test` is what CI runs; `make demo` shows the library at work.
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
APT_PACKAGES := libsecret-1-dev gnome-keyring libsecret-tools dbus dbus-bin pkg-config

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
	@# The demo must run the five verbs and exit 0.
	$(SWIFT) run --skip-build resourceful demo > .build/demo.log 2>&1 || { cat .build/demo.log; exit 1; }
	@for verb in "index users" "show users/1" "create users" "update users" "delete users"; do \
		grep -q "== $$verb" .build/demo.log || { echo "demo did not run: $$verb"; cat .build/demo.log; exit 1; }; \
	done; echo "demo: five verbs ran"

demo: setup
	$(SWIFT) build --product resourceful $(SWIFT_BUILD_FLAGS)
	$(SWIFT) run --skip-build resourceful demo

clean:
	rm -rf .build
