; codelibrarian tags for Kotlin.

(class_declaration "interface" (type_identifier) @name) @definition.interface
(class_declaration "enum" (type_identifier) @name) @definition.enum
(class_declaration "class" (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.class
(function_declaration (simple_identifier) @name) @definition.function
(type_alias (type_identifier) @name) @definition.type
(source_file
  (property_declaration (variable_declaration (simple_identifier) @name)) @definition.constant)

(call_expression (simple_identifier) @name) @reference.call
(call_expression (navigation_expression (navigation_suffix (simple_identifier) @name))) @reference.call
(user_type (type_identifier) @name) @reference.type
(delegation_specifier (user_type (type_identifier) @name)) @reference.class

(import_header (identifier) @import.spec)
