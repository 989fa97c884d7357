"""Small real repositories, one per language, for the index tests.

Each sample defines symbols in one file and uses them from another through the
language's import mechanism, so symbols, imports and references can be checked.
"""

from __future__ import annotations

PYTHON = {
    "pyproject.toml": "[project]\nname = 'shop'\n",
    "src/shop/__init__.py": '"""The shop package."""\n',
    "src/shop/models.py": (
        '"""Domain models."""\n'
        "MAX_ITEMS = 10\n\n\n"
        "class ShoppingCart:\n"
        '    """Holds items before checkout."""\n\n'
        "    def __init__(self) -> None:\n"
        "        self.items: list[str] = []\n\n"
        "    def add_item(self, name: str) -> None:\n"
        '        """Add one item."""\n'
        "        self.items.append(name)\n\n\n"
        "def compute_total(cart: ShoppingCart) -> int:\n"
        "    # the number of items\n"
        "    return len(cart.items)\n"
    ),
    "src/shop/checkout.py": (
        "import os\n"
        "from .models import ShoppingCart, compute_total\n"
        "from shop import models\n\n\n"
        "def checkout() -> int:\n"
        "    cart = ShoppingCart()\n"
        "    cart.add_item('x')\n"
        "    return compute_total(cart) + models.MAX_ITEMS + len(os.sep)\n"
    ),
}

JAVASCRIPT = {
    "lib/math.js": (
        "// Math helpers.\n"
        "export const PI_ISH = 3;\n\n"
        "/** Adds two numbers. */\n"
        "export function addNumbers(a, b) {\n  return a + b;\n}\n\n"
        "export class Calculator {\n"
        "  constructor() { this.total = 0; }\n"
        "  add(x) { this.total = addNumbers(this.total, x); return this; }\n"
        "}\n"
        "export const square = (x) => x * x;\n"
    ),
    "lib/index.js": "export * from './math';\n",
    "app.js": (
        "import { Calculator, addNumbers } from './lib';\n"
        "import React from 'react';\n"
        "const util = require('./lib/math.js');\n\n"
        "function main() {\n  const c = new Calculator();\n  c.add(addNumbers(1, 2));\n"
        "  return util.square(2);\n}\n"
    ),
}

TYPESCRIPT = {
    "src/types.ts": (
        "/** A user of the system. */\n"
        "export interface UserRecord {\n  id: number;\n  name: string;\n}\n\n"
        "export type UserId = number;\n\n"
        "export enum Role { Admin, Member }\n\n"
        "export abstract class Repository<T> {\n"
        "  abstract find(id: number): T | undefined;\n"
        "}\n"
    ),
    "src/users.ts": (
        "import { UserRecord, Repository } from './types';\n"
        "import * as path from 'node:path';\n\n"
        "export class UserRepository extends Repository<UserRecord> {\n"
        "  private rows: UserRecord[] = [];\n"
        "  find(id: number): UserRecord | undefined {\n"
        "    return this.rows.find((r) => r.id === id);\n  }\n}\n\n"
        "export function loadUsers(dir: string): UserRepository {\n"
        "  path.join(dir, 'x');\n  return new UserRepository();\n}\n"
    ),
    "src/view.tsx": (
        "import { loadUsers } from './users';\n\n"
        "export function UserList(props: { dir: string }) {\n"
        "  const repo = loadUsers(props.dir);\n"
        "  return <ul>{repo.find(1)?.name}</ul>;\n}\n"
    ),
}

GO = {
    "go.mod": "module example.com/shop\n\ngo 1.22\n",
    "inventory/stock.go": (
        "// Package inventory tracks stock.\n"
        "package inventory\n\n"
        "// MaxStock is the most we hold.\n"
        "const MaxStock = 100\n\n"
        "// Item is one product.\n"
        "type Item struct {\n\tName string\n\tCount int\n}\n\n"
        "// Store finds items.\n"
        "type Store interface {\n\tFind(name string) *Item\n}\n\n"
        "// Restock adds count items.\n"
        "func (i *Item) Restock(count int) {\n\ti.Count += count\n}\n\n"
        "// NewItem makes an item.\n"
        "func NewItem(name string) *Item {\n\treturn &Item{Name: name}\n}\n"
    ),
    "main.go": (
        "package main\n\n"
        'import (\n\t"fmt"\n\t"example.com/shop/inventory"\n)\n\n'
        'func main() {\n\tit := inventory.NewItem("a")\n\tit.Restock(inventory.MaxStock)\n'
        "\tfmt.Println(it)\n}\n"
    ),
}

RUST = {
    "Cargo.toml": '[package]\nname = "shop"\nversion = "0.1.0"\n',
    "src/lib.rs": "pub mod inventory;\nmod util;\n\nuse crate::inventory::Item;\n\n"
    'pub fn first_item() -> Item {\n    util::make_item("x")\n}\n',
    "src/inventory.rs": (
        "/// A product.\n"
        "pub struct Item {\n    pub name: String,\n}\n\n"
        "pub const MAX_ITEMS: usize = 10;\n\n"
        "pub trait Describe {\n    fn describe(&self) -> String;\n}\n\n"
        "impl Item {\n    /// Make a new item.\n"
        "    pub fn new(name: &str) -> Self {\n"
        "        Item { name: name.to_string() }\n    }\n}\n\n"
        "impl Describe for Item {\n    fn describe(&self) -> String {\n"
        "        self.name.clone()\n    }\n}\n\n"
        "pub enum Kind {\n    Small,\n    Large,\n}\n\n"
        'macro_rules! shout {\n    ($e:expr) => { println!("{}", $e) };\n}\n'
    ),
    "src/util/mod.rs": "use crate::inventory::Item;\nuse std::fmt;\n\n"
    "pub fn make_item(name: &str) -> Item {\n    Item::new(name)\n}\n",
}

JAVA = {
    "src/main/java/com/shop/model/Product.java": (
        "package com.shop.model;\n\n"
        "/** A product for sale. */\n"
        "public class Product {\n"
        "    public static final int MAX_PRICE = 1000;\n"
        "    private final String name;\n\n"
        "    public Product(String name) { this.name = name; }\n\n"
        "    /** The product's name. */\n"
        "    public String getName() { return name; }\n}\n"
    ),
    "src/main/java/com/shop/model/Priced.java": (
        "package com.shop.model;\n\npublic interface Priced {\n    int price();\n}\n"
    ),
    "src/main/java/com/shop/App.java": (
        "package com.shop;\n\n"
        "import com.shop.model.Product;\n"
        "import java.util.List;\n\n"
        "public class App {\n"
        "    public static void main(String[] args) {\n"
        '        Product p = new Product("x");\n'
        "        System.out.println(p.getName());\n    }\n}\n"
    ),
}

C = {
    "include/stack.h": (
        "#ifndef STACK_H\n#define STACK_H\n\n"
        "#define STACK_MAX 64\n\n"
        "/* A fixed-size stack. */\n"
        "typedef struct Stack {\n    int items[STACK_MAX];\n    int top;\n} Stack;\n\n"
        "void stack_push(Stack *s, int v);\n"
        "int stack_pop(Stack *s);\n\n#endif\n"
    ),
    "src/stack.c": (
        '#include "../include/stack.h"\n'
        "#include <stdio.h>\n\n"
        "/* Push one value. */\n"
        "void stack_push(Stack *s, int v) {\n    s->items[s->top++] = v;\n}\n\n"
        "int stack_pop(Stack *s) {\n    return s->items[--s->top];\n}\n"
    ),
    "src/main.c": (
        '#include "stack.h"\n\n'
        "int main(void) {\n    Stack s = {0};\n    stack_push(&s, 1);\n"
        "    return stack_pop(&s);\n}\n"
    ),
}

CPP = {
    "src/geometry.hpp": (
        "#pragma once\n"
        "namespace geo {\n"
        "// A 2-D point.\n"
        "class Point {\npublic:\n    Point(double x, double y);\n"
        "    double distanceTo(const Point& other) const;\nprivate:\n    double x_, y_;\n};\n"
        "struct Box { Point lo; Point hi; };\n"
        "}\n"
    ),
    "src/geometry.cpp": (
        '#include "geometry.hpp"\n#include <cmath>\n\n'
        "namespace geo {\n"
        "Point::Point(double x, double y) : x_(x), y_(y) {}\n\n"
        "double Point::distanceTo(const Point& other) const {\n"
        "    return std::sqrt((x_ - other.x_) * (x_ - other.x_));\n}\n}\n"
    ),
    "src/main.cpp": (
        '#include "geometry.hpp"\n\n'
        "int main() {\n    geo::Point a(0, 0), b(1, 1);\n"
        "    return (int)a.distanceTo(b);\n}\n"
    ),
}

CSHARP = {
    "Models/Order.cs": (
        "namespace Shop.Models\n{\n"
        "    /// <summary>An order.</summary>\n"
        "    public class Order\n    {\n"
        "        public const int MaxLines = 50;\n"
        "        public decimal Total { get; set; }\n"
        "        public void AddLine(decimal amount) { Total += amount; }\n    }\n\n"
        "    public interface IOrderStore\n    {\n        Order Load(int id);\n    }\n"
        "    public enum Status { Open, Closed }\n"
        "    public struct Money { public decimal Amount; }\n"
        "}\n"
    ),
    "Program.cs": (
        "using System;\nusing Shop.Models;\n\n"
        "namespace Shop\n{\n    class Program\n    {\n"
        "        static void Main()\n        {\n"
        "            var o = new Order();\n            o.AddLine(3);\n"
        "            Console.WriteLine(o.Total);\n        }\n    }\n}\n"
    ),
}

RUBY = {
    "lib/inventory.rb": (
        "# Tracks stock.\n"
        "module Inventory\n"
        "  MAX_STOCK = 100\n\n"
        "  # One product.\n"
        "  class Item\n"
        "    def initialize(name)\n      @name = name\n    end\n\n"
        "    def restock(count)\n      count + 1\n    end\n\n"
        "    def self.build(name)\n      new(name)\n    end\n"
        "  end\nend\n"
    ),
    "app.rb": (
        "require_relative 'lib/inventory'\nrequire 'json'\n\n"
        "def run_app\n  item = Inventory::Item.build('a')\n  item.restock(2)\nend\n"
    ),
}

PHP = {
    "composer.json": '{"autoload": {"psr-4": {"App\\\\": "src/"}}}\n',
    "src/Models/Invoice.php": (
        "<?php\nnamespace App\\Models;\n\n"
        "/** An invoice. */\n"
        "class Invoice\n{\n"
        "    const MAX_LINES = 20;\n"
        "    public function total(): int\n    {\n        return 0;\n    }\n}\n\n"
        "interface Payable\n{\n    public function pay(): void;\n}\n\n"
        "function make_invoice(): Invoice\n{\n    return new Invoice();\n}\n"
    ),
    "src/main.php": (
        "<?php\nnamespace App;\n\n"
        "use App\\Models\\Invoice;\n"
        "require_once __DIR__ . '/Models/Invoice.php';\n\n"
        "function main(): int\n{\n    $i = new Invoice();\n"
        "    return $i->total() + \\App\\Models\\make_invoice()->total();\n}\n"
    ),
}

KOTLIN = {
    "src/main/kotlin/com/shop/model/Cart.kt": (
        "package com.shop.model\n\n"
        "const val MAX_ITEMS = 10\n\n"
        "/** A shopping cart. */\n"
        "class Cart {\n"
        "    private val items = mutableListOf<String>()\n"
        "    fun addItem(name: String) {\n        items.add(name)\n    }\n"
        "    fun size(): Int = items.size\n}\n\n"
        "interface Priced {\n    fun price(): Int\n}\n\n"
        "object Registry {\n    fun lookup(id: Int): Cart = Cart()\n}\n\n"
        "fun emptyCart(): Cart = Cart()\n"
    ),
    "src/main/kotlin/com/shop/App.kt": (
        "package com.shop\n\n"
        "import com.shop.model.Cart\nimport com.shop.model.emptyCart\nimport kotlin.math.max\n\n"
        'fun main() {\n    val c = emptyCart()\n    c.addItem("a")\n'
        "    println(max(c.size(), 1))\n}\n"
    ),
}

ALL: dict[str, dict[str, str]] = {
    "python": PYTHON,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "go": GO,
    "rust": RUST,
    "java": JAVA,
    "c": C,
    "cpp": CPP,
    "csharp": CSHARP,
    "ruby": RUBY,
    "php": PHP,
    "kotlin": KOTLIN,
}
