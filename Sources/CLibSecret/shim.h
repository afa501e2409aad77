#ifndef RESOURCEFUL_CLIBSECRET_SHIM_H
#define RESOURCEFUL_CLIBSECRET_SHIM_H

#include <libsecret/secret.h>

/// A schema with the string attributes `service` and `account`.
static inline SecretSchema *resourceful_schema_new(const gchar *name) {
    GHashTable *types = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(types, (gpointer)"service", GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING));
    g_hash_table_insert(types, (gpointer)"account", GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING));
    SecretSchema *schema = secret_schema_newv(name, SECRET_SCHEMA_NONE, types);
    g_hash_table_unref(types);
    return schema;
}

/// The attributes naming one credential; the strings must outlive the table.
static inline GHashTable *resourceful_attributes_new(const gchar *service, const gchar *account) {
    GHashTable *attributes = g_hash_table_new(g_str_hash, g_str_equal);
    g_hash_table_insert(attributes, (gpointer)"service", (gpointer)service);
    g_hash_table_insert(attributes, (gpointer)"account", (gpointer)account);
    return attributes;
}

#endif
