"""A Django project around django-oauth-toolkit: the OAuth 2 authorization server of the tests."""
