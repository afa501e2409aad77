"""The server's SQLite database: its tables, its user and its clients."""

import secrets

from django.apps import apps
from django.db import connection


def create():
    """Creates the tables of the installed apps' models in the new, empty database.

    Straight from the models, as Django's test runner does for a test database with
    `"MIGRATE": False`: the schema is the one the migrations end at, made in a twentieth of the
    time `migrate` takes (their data migrations have nothing to change in an empty database).
    The database is never migrated later, so no migration is recorded.
    """
    with connection.schema_editor() as editor:
        for model in apps.get_models():
            if model._meta.managed and not model._meta.proxy:
                editor.create_model(model)


def populate(options, clients, redirect_uris: str):
    from django.contrib.auth import get_user_model
    from oauth2_provider.models import get_application_model

    Application = get_application_model()
    get_user_model().objects.create_user(username=options.username, password=options.password)
    for client_id, secret, grant_type in clients:
        Application.objects.create(
            name=client_id,
            client_id=client_id,
            client_secret=secret or "",
            # Compared as stored: a hashed secret would cost a PBKDF2 run on every token request.
            hash_client_secret=False,
            client_type=Application.CLIENT_CONFIDENTIAL if secret else Application.CLIENT_PUBLIC,
            authorization_grant_type=grant_type,
            redirect_uris=redirect_uris if grant_type == Application.GRANT_AUTHORIZATION_CODE else "",
            skip_authorization=False,
        )
    if options.jwt_public_key:
        Application.objects.create(
            name=options.jwt_client_id,
            client_id=options.jwt_client_id,
            # Never told to anyone: this client authenticates with its key only.
            client_secret=secrets.token_urlsafe(32),
            hash_client_secret=False,
            client_type=Application.CLIENT_CONFIDENTIAL,
            authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
        )
