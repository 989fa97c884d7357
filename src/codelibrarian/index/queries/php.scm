; codelibrarian tags for PHP.

(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method
(const_declaration (const_element (name) @name)) @definition.constant
(namespace_definition name: (namespace_name) @name) @definition.module

(namespace_use_clause (qualified_name) @import.use)
(namespace_use_clause (name) @import.use)
(require_once_expression (_) @import.require)
(require_expression (_) @import.require)
(include_expression (_) @import.require)
(include_once_expression (_) @import.require)

; references
(function_call_expression function: (name) @reference.call)
(function_call_expression function: (qualified_name (name) @reference.call))
(member_call_expression name: (name) @reference.call)
(scoped_call_expression name: (name) @reference.call)
(object_creation_expression (name) @reference.class)
(object_creation_expression (qualified_name (name) @reference.class))
(base_clause (name) @reference.class)
(class_interface_clause (name) @reference.interface)
(named_type (name) @reference.type)
