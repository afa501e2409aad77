#ifndef RESOURCEFUL_CLIBSECRET_SHIM_H
#define RESOURCEFUL_CLIBSECRET_SHIM_H

#include <libsecret/secret.h>

/// A schema with the string attributes `service` and `account`.
static inline SecretSchema *resourceful_schema_new_flags(const gchar *name, SecretSchemaFlags flags) {
    GHashTable *types = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(types, (gpointer)"service", GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING));
    g_hash_table_insert(types, (gpointer)"account", GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING));
    SecretSchema *schema = secret_schema_newv(name, flags, types);
    g_hash_table_unref(types);
    return schema;
}

/// The schema items are stored under: its name is written as the `xdg:schema` attribute.
static inline SecretSchema *resourceful_schema_new(const gchar *name) {
    return resourceful_schema_new_flags(name, SECRET_SCHEMA_NONE);
}

/// A schema that matches `service` and `account` whatever an item's `xdg:schema`: items stored by
/// `secret-tool` (`org.freedesktop.Secret.Generic`) or any other Secret Service client.
static inline SecretSchema *resourceful_any_schema_new(void) {
    return resourceful_schema_new_flags("org.resourceful.Any", SECRET_SCHEMA_DONT_MATCH_NAME);
}

/// Deletes the items with `attributes` whose `xdg:schema` is not `keep`, so that one secret is
/// left for a service and account after a store. FALSE with `error` set when a call failed.
static inline gboolean resourceful_delete_other_schemas(
    SecretService *service, const gchar *keep, GHashTable *attributes, GCancellable *cancellable, GError **error
) {
    SecretSchema *any = resourceful_any_schema_new();
    GError *failure = NULL;
    GList *items = secret_service_search_sync(service, any, attributes, SECRET_SEARCH_ALL, cancellable, &failure);
    secret_schema_unref(any);
    if (failure != NULL) {
        g_propagate_error(error, failure);
        return FALSE;
    }
    gboolean ok = TRUE;
    for (GList *link = items; link != NULL && ok; link = link->next) {
        SecretItem *item = link->data;
        GHashTable *found = secret_item_get_attributes(item);
        const gchar *schema = found ? g_hash_table_lookup(found, "xdg:schema") : NULL;
        if (g_strcmp0(schema, keep) != 0 && !secret_item_delete_sync(item, cancellable, &failure)) {
            g_propagate_error(error, failure);
            ok = FALSE;
        }
        if (found) g_hash_table_unref(found);
    }
    g_list_free_full(items, g_object_unref);
    return ok;
}

/// The attributes naming one credential; the strings must outlive the table.
static inline GHashTable *resourceful_attributes_new(const gchar *service, const gchar *account) {
    GHashTable *attributes = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(attributes, (gpointer)"service", (gpointer)service);
    g_hash_table_insert(attributes, (gpointer)"account", (gpointer)account);
    return attributes;
}

#endif
