# Set-up, build and test. `make test` is what CI runs; `make demo` shows the library at work.
SWIFT ?= swift
SWIFT_BUILD_FLAGS ?=
# Runs a command with a private, unlocked gnome-keyring on a private session bus.
KEYRING := scripts/private-keyring.sh run
# Runs a command with TMPDIR a folder of its own, removed afterwards: the tests' scratch folders.
SCRATCH := scripts/scratch-tmp.sh
# Swift Testing starts every test of a run at once; on two cores, hundreds of tests that each
# start servers and check time bounds starve one another. Four at a time leaves each test's
# deadlines to the test on a loaded machine (the main step takes about 110 s against 70 s at
# sixteen, where a test that waits on a real server was starved about once in four runs).
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH ?= 4
# Debian packages: what a build needs (libsecret's headers), what the demo adds (a keyring on a
# session bus), and the third-party servers and parsers the tests run against.
BUILD_PACKAGES := libsecret-1-dev pkg-config
KEYRING_PACKAGES := gnome-keyring libsecret-tools dbus dbus-bin
SERVER_PACKAGES := nginx-light openssl php-cli ruby-rack node-qs tinyproxy python3-venv postgresql

.PHONY: all setup setup-build setup-demo build install test check-closures test-tsan examples bench bench-streaming bench-fleet fuzz demo clean

all: build

# Installs the Debian packages in $(1) that the machine lacks; does nothing when they are all
# present. apt-get runs as root: through sudo for another user (it may ask for a password). Without
# apt-get (another system), it names what to install and goes on. (apt here can fail once with
# "cannot access archive": retry once.)
define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		if ! command -v apt-get >/dev/null 2>&1; then \
			echo "Not a Debian system: install the equivalents of$$missing yourself."; \
		else \
			sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
			echo "Installing with $${sudo:+sudo }apt-get:$$missing"; \
			$$sudo apt-get update -qq && \
			{ $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing || \
			  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; }; \
		fi; \
	fi
endef

# Python tools the tests run (mitmproxy writes and reads HAR files; haralyzer reads them; FastAPI
# under uvicorn serves the OpenAPI example's API and, with sse-starlette and python-multipart, the
# streaming tests' events, lines and upload sink; Django with django-oauth-toolkit, under waitress,
# is the OAuth tests' authorization server, and PyJWT checks its private_key_jwt assertions:
# oauthlib stays at 3.3.1, as django-oauth-toolkit 3.4.1's device flow fails with oauthlib 4, and
# jwcrypto at 1.5.8, the last to accept mitmproxy's cryptography 44), in a virtual environment of
# the project's own under .build; made once, and again when this list changes.
PYTHON_TOOLS := mitmproxy==11.0.2 haralyzer==2.4.0 fastapi==0.165.0 uvicorn==0.54.0 sse-starlette==3.7.0 python-multipart==0.0.34 django==5.2.19 django-oauth-toolkit==3.4.1 oauthlib==3.3.1 jwcrypto==1.5.8 pyjwt==2.15.1 waitress==3.0.2
PYTHON_ENV := .build/python

# Everything the tests need: the packages above and the Python tools.
setup:
	$(call apt_install,$(BUILD_PACKAGES) $(KEYRING_PACKAGES) $(SERVER_PACKAGES))
	@grep -qxF '$(PYTHON_TOOLS)' $(PYTHON_ENV)/.tools-installed 2>/dev/null || { \
		echo "Installing into $(PYTHON_ENV): $(PYTHON_TOOLS)"; \
		python3 -m venv $(PYTHON_ENV) && \
		{ $(PYTHON_ENV)/bin/pip install -q $(PYTHON_TOOLS) || $(PYTHON_ENV)/bin/pip install -q $(PYTHON_TOOLS); } && \
		echo '$(PYTHON_TOOLS)' > $(PYTHON_ENV)/.tools-installed; }

# What a build needs.
setup-build:
	$(call apt_install,$(BUILD_PACKAGES))

# What the demo needs: a build and a keyring.
setup-demo:
	$(call apt_install,$(BUILD_PACKAGES) $(KEYRING_PACKAGES))

build: setup-build
	$(SWIFT) build $(SWIFT_BUILD_FLAGS)

test: setup
	@# A clone alone must test itself: nothing may read files beside the repository (the pattern is
	@# split so that this line does not match itself).
	@! git grep -nI -e '\.\./shar''ed/' -- . ':!CHANGELOG.md' || { echo "the files above read outside the repository"; exit 1; }
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	@# Swift 6.3 can give a closure inside #expect or #require and a closure after it one name, so
	@# that the later one runs the earlier one's body: such a test checks something else than it says.
	python3 scripts/check-shared-closures.py
	$(SCRATCH) $(KEYRING) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --skip ForeignHARTests --skip ResourcefulOpenAPITests --skip ResourcefulOAuth2Tests --skip '\.LoadTests' --skip HungFileSystemTests --skip RateLimitGatewayTests --skip ResourcefulPostgresTests --skip ProcessEnvironmentTests
	@# `setenv` is not safe beside threads that read the environment (a process started, a
	@# transport reading proxy variables): the test that changes the process's own runs alone.
	$(SCRATCH) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter ProcessEnvironmentTests
	@# A download onto a file system that never answers holds threads of the process's shared
	@# thread pool until the test ends the mount: on its own, so that no other test's file work waits.
	$(SCRATCH) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter HungFileSystemTests
	@# Ten thousand calls at once keep both cores busy: on their own, so that the tests that check
	@# time bounds are not starved.
	$(SCRATCH) $(KEYRING) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter '\.LoadTests'
	@# A thousand calls kept to a gateway's rate for about nine seconds, checked against the
	@# policy's least time: on their own, so that other tests' work does not delay them.
	$(SCRATCH) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter RateLimitGatewayTests
	@# The shared state's suites each start a PostgreSQL cluster (initdb as an unprivileged user),
	@# and one runs eight worker processes against nginx for about ten seconds: on their own.
	$(SCRATCH) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter ResourcefulPostgresTests
	@# The generator's tests parse documents of hundreds of operations, each on a thread of the
	@# shared pool for seconds; mitmproxy and haralyzer start Python interpreters: each on its own,
	@# so that they starve neither each other nor the OAuth 2 suites, whose loopback redirect and
	@# device flow check time bounds (and start Django, curl and the CLI).
	$(SCRATCH) $(KEYRING) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter ResourcefulOpenAPITests
	$(SCRATCH) $(KEYRING) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter ForeignHARTests
	$(SCRATCH) $(KEYRING) $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter ResourcefulOAuth2Tests
	@# The demo must run the five verbs through the keyring and exit 0.
	$(KEYRING) $(SWIFT) run --skip-build resourceful demo > .build/demo.log 2>&1 || { cat .build/demo.log; exit 1; }
	@grep -q "Stored a demo token in the keyring" .build/demo.log || { echo "demo did not use the keyring"; cat .build/demo.log; exit 1; }
	@for verb in "index users" "show users/1" "create users" "update users" "delete users"; do \
		grep -q "== $$verb" .build/demo.log || { echo "demo did not run: $$verb"; cat .build/demo.log; exit 1; }; \
	done; echo "demo: five verbs ran through the keyring"
	$(MAKE) examples

# Looks for closures the compiler gave one name (scripts/check-shared-closures.py), after a build
# of the tests; `make test` runs it.
check-closures:
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	python3 scripts/check-shared-closures.py

# `make test` beside `stress-ng --cpu 2`, which keeps every core busy: the tests' time bounds and
# readiness waits must hold on a loaded machine. stress-ng is stopped however the tests end (and
# ends by itself after two hours, should this shell be killed).
.PHONY: test-loaded
test-loaded: setup
	$(call apt_install,stress-ng)
	@stress-ng --cpu 2 --timeout 7200 --quiet & stress=$$!; \
	trap 'kill $$stress 2>/dev/null; wait $$stress 2>/dev/null' EXIT INT TERM HUP; \
	$(MAKE) test

# The core and testing modules' tests under ThreadSanitizer, in a build folder of their own. The
# decoder's own tests (ResourcefulJSONTests) are single-threaded computation, nothing for the
# sanitizer to see: not run here.
# The OpenAPI generator, the PostgreSQL module and the container modules are left out
# (RESOURCEFUL_WITHOUT_OPENAPI, RESOURCEFUL_WITHOUT_POSTGRES and RESOURCEFUL_WITHOUT_CONTAINERS,
# read by Package.swift): their tests are not run here, and their packages would only be built again.
# The sanitizer makes every step several times slower: four tests at a time, as without it.
TSAN_FLAGS := --sanitize=thread --scratch-path .build-tsan
TSAN_ENV := RESOURCEFUL_WITHOUT_OPENAPI=1 RESOURCEFUL_WITHOUT_POSTGRES=1 RESOURCEFUL_WITHOUT_CONTAINERS=1
TSAN_WIDTH := SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=4 TSAN_OPTIONS=suppressions=$(CURDIR)/scripts/tsan.supp
test-tsan: setup
	$(TSAN_ENV) $(SWIFT) build --build-tests $(TSAN_FLAGS)
	$(TSAN_WIDTH) $(TSAN_ENV) $(SCRATCH) $(SWIFT) test --skip-build $(TSAN_FLAGS) --filter 'ResourcefulTests|ResourcefulTestingTests' --skip ForeignHARTests --skip '\.LoadTests' --skip HungFileSystemTests --skip RateLimitGatewayTests --skip ProcessEnvironmentTests
	$(TSAN_WIDTH) $(TSAN_ENV) $(SCRATCH) $(SWIFT) test --skip-build $(TSAN_FLAGS) --filter '\.LoadTests'

# Runs the benchmarks: a release build, then the runs with the client pinned to the first core,
# against nginx on the last core (scripts/bench-server.sh) and credentials in a private keyring.
# Prints the medians as ratios to raw AsyncHTTPClient measured in the same run.
# `make bench BENCH_FILTER='index C=32.*'` runs only the benchmarks whose whole names match the pattern.
BENCH_APT_PACKAGES := nginx-light
BENCH_FILTER ?=
bench: setup
	$(call apt_install,$(BENCH_APT_PACKAGES))
	cd Benchmarks && $(SWIFT) build -c release
	@scratch=$$(mktemp -d) && chmod 755 $$scratch && server=$$scratch/server; \
	url=$$(scripts/bench-server.sh start $$server) || exit 1; \
	trap '$(CURDIR)/scripts/bench-server.sh stop '$$server' && rmdir '$$scratch EXIT; \
	cd Benchmarks && RESOURCEFUL_BENCH_URL=$$url RESOURCEFUL_BENCH_WWW=$$server/www RESOURCEFUL_BENCH_KEYRING=1 \
		../$(KEYRING) taskset -c 0 $(SWIFT) package --allow-writing-to-package-directory benchmark --no-progress \
		$(if $(BENCH_FILTER),--filter '$(BENCH_FILTER)') \
		| tee .build/benchmarks.txt
	python3 Benchmarks/scripts/ratios.py < Benchmarks/.build/benchmarks.txt

# Streaming: a 1 GiB download and upload against curl, peak memory, and an event stream against
# raw AsyncHTTPClient (Benchmarks/README.md). Options of Benchmarks/scripts/bench-streaming.py in
# BENCH_STREAMING_ARGS, e.g. BENCH_STREAMING_ARGS='--rounds 9'.
BENCH_STREAMING_ARGS ?=
bench-streaming: setup
	$(call apt_install,$(BENCH_APT_PACKAGES))
	cd Benchmarks && $(SWIFT) build -c release --product resourceful-bench-streaming
	python3 Benchmarks/scripts/bench-streaming.py Benchmarks/.build/release/resourceful-bench-streaming $(BENCH_STREAMING_ARGS) \
		| tee Benchmarks/.build/bench-streaming.txt

# A fleet's shared state against each process's own: per call (paired, alternated) and across 8
# processes, with PostgreSQL and nginx started by the script (Benchmarks/README.md). Options of
# Benchmarks/scripts/bench-fleet.py in BENCH_FLEET_ARGS, e.g. BENCH_FLEET_ARGS='--rounds 5'.
BENCH_FLEET_ARGS ?=
bench-fleet: setup
	$(call apt_install,$(BENCH_APT_PACKAGES))
	$(SWIFT) build -c release --product resourceful-fleet-worker
	python3 Benchmarks/scripts/bench-fleet.py $(BENCH_FLEET_ARGS) | tee .build/bench-fleet.txt

# A long run of the fast decoder's fuzz test (the one in `make test` is 100 times shorter).
fuzz: setup
	$(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	RESOURCEFUL_FUZZ_SCALE=100 $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS) --filter FastJSONDecoderFuzzTests

# Builds and tests the examples (their own package, depending on this one by path): the server
# apps, the client the build plugin generates from the FastAPI app's own /openapi.json, and the
# public OpenAPI documents in Tests/Fixtures/openapi generated by `resourceful generate` and compiled.
OPENAPI_FIXTURES := Tests/Fixtures/openapi
examples: setup
	$(SWIFT) build --product resourceful $(SWIFT_BUILD_FLAGS)
	scripts/fastapi-openapi.sh Examples/openapi-client/Sources/ItemsClient/openapi.json
	@rm -rf Examples/openapi-fixtures/Generated
	@for document in $(OPENAPI_FIXTURES)/*.yaml; do \
		name=$$(basename $$document .yaml | sed 's/^readme-oas-examples-3\.[01]-yaml-//'); \
		.build/debug/resourceful generate --openapi $$document --output Examples/openapi-fixtures/Generated --namespace $$name \
			2> .build/openapi-$$name-diagnostics.txt || { cat .build/openapi-$$name-diagnostics.txt; exit 1; }; \
	done
	cd Examples && $(SWIFT) build --build-tests $(SWIFT_BUILD_FLAGS)
	cd Examples && $(SWIFT) test --skip-build $(SWIFT_BUILD_FLAGS)

# Builds the command-line tool in release mode and copies it to $(PREFIX)/bin.
PREFIX ?= /usr/local
install: setup-build
	$(SWIFT) build -c release --product resourceful $(SWIFT_BUILD_FLAGS)
	install -d $(PREFIX)/bin
	install -m 755 "$$($(SWIFT) build -c release --show-bin-path $(SWIFT_BUILD_FLAGS))/resourceful" $(PREFIX)/bin/resourceful

demo: setup-demo
	$(SWIFT) build --product resourceful $(SWIFT_BUILD_FLAGS)
	$(KEYRING) $(SWIFT) run --skip-build resourceful demo

clean:
	rm -rf .build .build-tsan Examples/.build Benchmarks/.build
